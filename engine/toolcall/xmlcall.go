package toolcall

import (
	"strings"
	"unicode/utf8"
)

// xmlCall is a QwenXML call being read:
//
//	<function=NAME>
//	<parameter=KEY>
//	VALUE
//	</parameter>
//	...
//	</function>
//
// as Qwen3.5's chat template writes the calls of its history. The call
// begins once NAME is read; each parameter is written to the JSON
// arguments as it arrives: a string value (by the tool's schema) streams,
// JSON-escaped, other values are typed when they end (schema.go). A value
// ends at </parameter>, or where the next <parameter=, </function> or
// </tool_call> shows the model left </parameter> out; one newline after
// the key's '>' and one before the end are the layout's, not the value's.
type xmlCall struct {
	name    []byte // the function's or the parameter's name being read
	params  int    // parameters written
	typ     string // the schema type of the value being read
	str     bool   // the value is written as a JSON string, as it arrives
	atStart bool   // the value's first byte is due
	val     []byte // a typed value so far
	total   int    // the value's length so far
}

// valueEnds are the markers that end a parameter's value.
var valueEnds = []string{paramClose, paramOpen, functionClose, toolCallClose}

// stepXMLName reads the NAME of <function=NAME> or <parameter=NAME> up to
// its '>'. A name over maxName bytes or holding '<' or a newline is not
// one: a function's call is then content, a parameter's ends the call.
func (p *Parser) stepXMLName(final bool) (int, bool) {
	x := &p.xml
	s := p.buf
	gt := strings.IndexByte(s, '>')
	part := s
	if gt >= 0 {
		part = s[:gt]
	}
	bad := strings.IndexAny(part, "<\n")
	if room := maxName - len(x.name); len(part) > room && (bad < 0 || bad > room) {
		bad = room
	}
	switch {
	case bad >= 0:
		part, gt = part[:bad], -1
	case gt < 0 && !final:
		x.name = append(x.name, part...)
		if p.state == stXMLName {
			p.held = append(p.held, part...)
		}
		return len(part), true
	}
	if p.state == stXMLName {
		p.held = append(p.held, part...)
	}
	if gt < 0 { // not a name, or cut off
		p.endXML(stText)
		return len(part), false
	}
	x.name = append(x.name, part...)
	name := strings.TrimSpace(string(x.name))
	x.name = x.name[:0]
	if p.state == stXMLKey {
		p.startParam(name)
		return gt + 1, false
	}
	if !p.known(name) {
		p.held = append(p.held, '>')
		p.release()
		return gt + 1, false
	}
	p.begin(name)
	p.state = stXMLBody
	return gt + 1, false
}

// stepXMLBody reads between parameters: white space, then <parameter=,
// or the end of the call (</function>, or </tool_call> without it).
// Anything else ends the call, and is text.
func (p *Parser) stepXMLBody(final bool) (int, bool) {
	s := p.buf
	i := spaces(s)
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, paramOpen):
		p.state = stXMLKey
		return i + len(paramOpen), false
	case strings.HasPrefix(rest, functionClose):
		p.endXML(stAfterXML)
		return i + len(functionClose), false
	case strings.HasPrefix(rest, toolCallClose):
		p.endXML(stSkipSpace)
		return i + len(toolCallClose), false
	case !final && (rest == "" || prefixOfAny(rest, paramOpen, functionClose, toolCallClose)):
		return i, true
	}
	p.endXML(stText)
	return i, false
}

// startParam writes the key of the parameter whose value follows.
func (p *Parser) startParam(key string) {
	x := &p.xml
	sep := ", "
	if x.params == 0 {
		sep = "{"
	}
	x.params++
	x.typ = p.tools[p.cur.Name].typeOf(key)
	x.str = x.typ == "string"
	x.atStart, x.val, x.total = true, x.val[:0], 0
	open := ""
	if x.str {
		open = `"`
	}
	p.arg(sep + quote(key) + ": " + open)
	p.state = stXMLValue
}

// stepXMLValue reads a parameter's value up to its end, holding back a
// suffix that may begin an end marker, a newline that may be the last
// before it, and an incomplete UTF-8 sequence.
func (p *Parser) stepXMLValue(final bool) (int, bool) {
	x := &p.xml
	s := p.buf
	skip := 0
	if x.atStart {
		if s == "" && !final {
			return 0, true
		}
		x.atStart = false
		if strings.HasPrefix(s, "\n") {
			s, skip = s[1:], 1
		}
	}
	i, m := find(s, valueEnds)
	if i < 0 && !final {
		safe := len(s) - holdback(s, valueEnds)
		if safe > 0 && s[safe-1] == '\n' {
			safe--
		}
		safe = runeBoundary(s, safe)
		p.value(s[:safe])
		return skip + safe, true
	}
	if i < 0 {
		i = len(s)
	}
	p.value(strings.TrimSuffix(s[:i], "\n"))
	p.endValue()
	switch m {
	case paramClose:
		p.state = stXMLBody
	case paramOpen:
		p.state = stXMLKey
	case functionClose:
		p.endXML(stAfterXML)
	case toolCallClose:
		p.endXML(stSkipSpace)
	default: // cut off
		p.endXML(stText)
	}
	return skip + i + len(m), false
}

// value reads a piece of a parameter's value. A typed value longer than
// maxBuffered is a string.
func (p *Parser) value(s string) {
	x := &p.xml
	if s == "" {
		return
	}
	x.total += len(s)
	if !x.str && x.total > maxBuffered {
		x.str = true
		p.arg(`"` + string(appendEscaped(nil, string(x.val))))
		x.val = x.val[:0]
	}
	if x.str {
		p.arg(string(appendEscaped(nil, s)))
		return
	}
	x.val = append(x.val, s...)
}

// endValue writes the end of a parameter's value.
func (p *Parser) endValue() {
	x := &p.xml
	if x.str {
		p.arg(`"`)
		return
	}
	p.arg(typed(string(x.val), x.typ))
}

// endXML ends the call being read (as content if it has not begun) and
// goes on in state next.
func (p *Parser) endXML(next state) {
	if !p.begun {
		p.release()
		return
	}
	if p.xml.params == 0 {
		p.arg("{}")
	} else {
		p.arg("}")
	}
	p.end()
	p.state = next
}

// stepAfterXML reads what follows </function>: white space, then
// </tool_call>. Anything else is text.
func (p *Parser) stepAfterXML(final bool) (int, bool) {
	s := p.buf
	i := spaces(s)
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, toolCallClose):
		p.state = stSkipSpace
		return i + len(toolCallClose), false
	case !final && (rest == "" || strings.HasPrefix(toolCallClose, rest)):
		return i, true
	}
	p.state = stText
	return i, false
}

// runeBoundary is n, or less so that s[:n] does not end inside a UTF-8
// sequence that the bytes after n may complete.
func runeBoundary(s string, n int) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= n; k++ {
		c := s[n-k]
		if c < utf8.RuneSelf {
			return n
		}
		if utf8.RuneStart(c) {
			if utf8.FullRuneInString(s[n-k : n]) {
				return n
			}
			return n - k
		}
	}
	return n
}
