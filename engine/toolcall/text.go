package toolcall

import "strings"

// stepText reads content or reasoning up to the next marker: an opener,
// </think> inside a think section, and <think> at the very start of the
// output (Qwen3 opens its think section itself). It holds back a suffix
// that may begin a marker.
func (p *Parser) stepText(final bool) (int, bool) {
	s := p.buf
	if !p.started && !p.reasoning {
		switch {
		case strings.HasPrefix(s, thinkOpen):
			p.started, p.reasoning, p.state = true, true, stSkipSpace
			return len(thinkOpen), false
		case !final && strings.HasPrefix(thinkOpen, s): // "" included
			return 0, true
		}
	}
	if s == "" {
		return 0, true
	}
	p.started = true
	markers := p.markers[0]
	if p.reasoning {
		markers = p.markers[1]
	}
	i, m := find(s, markers)
	if i < 0 {
		keep := 0
		if !final {
			keep = holdback(s, markers)
		}
		p.text(s[:len(s)-keep])
		return len(s) - keep, true
	}
	p.text(s[:i])
	switch m {
	case thinkClose:
		p.reasoning, p.state = false, stSkipSpace
		return i + len(m), false
	case llamaOpen:
		p.startJSON() // the opener is the call's first bytes
		return i, false
	}
	p.held = append(p.held[:0], m...)
	p.state = stBody
	return i + len(m), false
}

// stepSkipSpace drops white space after </think> and after a call.
func (p *Parser) stepSkipSpace(final bool) (int, bool) {
	i := spaces(p.buf)
	if i < len(p.buf) || final {
		p.state = stText
		return i, false
	}
	return i, true
}

// stepBody reads what follows <tool_call> (or Llama3's <|python_tag|> or
// ';'): white space, then a JSON call, or for Hermes and QwenXML an XML
// one (each family's models are read in the other's format too). Anything
// else makes the would-be call content.
func (p *Parser) stepBody(final bool) (int, bool) {
	s := p.buf
	i := spaces(s)
	p.held = append(p.held, s[:i]...)
	rest := s[i:]
	xml := p.family != Llama3
	switch {
	case len(p.held) > maxHeld:
	case rest == "" && !final:
		return i, true
	case rest == "":
	case rest[0] == '{':
		p.startJSON()
		return i, false
	case xml && strings.HasPrefix(rest, functionOpen):
		p.held = append(p.held, functionOpen...)
		p.xml = xmlCall{name: p.xml.name[:0], val: p.xml.val[:0]}
		p.state = stXMLName
		return i + len(functionOpen), false
	case xml && !final && strings.HasPrefix(functionOpen, rest):
		return i, true
	}
	p.release()
	return i, false
}

// find is the first of markers in s and where it is; -1 if none is.
func find(s string, markers []string) (int, string) {
	at, found := -1, ""
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, found = i, m
		}
	}
	return at, found
}

// holdback is the length of the longest suffix of s that is a proper
// prefix of one of markers: text that may still become a marker.
func holdback(s string, markers []string) int {
	longest := 0
	for _, m := range markers {
		longest = max(longest, len(m)-1)
	}
	for k := min(len(s), longest); k > 0; k-- {
		for _, m := range markers {
			if strings.HasPrefix(m, s[len(s)-k:]) {
				return k
			}
		}
	}
	return 0
}

// prefixOfAny says whether s is a proper prefix of one of markers.
func prefixOfAny(s string, markers ...string) bool {
	for _, m := range markers {
		if len(s) < len(m) && strings.HasPrefix(m, s) {
			return true
		}
	}
	return false
}

// spaces is the number of white space bytes that s begins with.
func spaces(s string) int {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}
