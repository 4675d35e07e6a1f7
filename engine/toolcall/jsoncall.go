package toolcall

import (
	"encoding/json"
	"strings"
)

// jsonCall is a JSON call being read: {"name": NAME, "arguments": {...}}
// (Hermes) or {"name": NAME, "parameters": {...}} (Llama3); either key
// names the arguments in both. The object is checked a byte at a time.
// When "name" comes first the call begins once the name is read, and the
// arguments object streams as it arrives, up to the last point from
// which closing what is open makes it complete JSON. Otherwise
// (fallback) the object is read whole and then decoded.
type jsonCall struct {
	sc       scanner
	keys     int    // top-level keys read
	key      []byte // the top-level key being read, raw
	inKey    bool
	member   member // what the top-level value being read is
	raw      []byte // the name, or arguments written as a string, being read
	fallback bool
	start    int // where the object begins in Parser.held (fallback)

	args     argsState
	pending  []byte // streamed arguments not yet emitted
	safe     int    // pending[:safe] can be emitted
	inString bool   // the scanner was in a string at safe
	argsText string // arguments written as a JSON string, decoded
}

type member uint8

const (
	memberOther member = iota
	memberName
	memberArgs
)

type argsState uint8

const (
	argsNone   argsState = iota // not read (yet): {}
	argsObject                  // streaming
	argsString                  // a JSON string holding the object
	argsDone                    // the object is read
)

// startJSON starts reading a JSON call at the '{' that begins p.buf.
func (p *Parser) startJSON() {
	p.json = jsonCall{sc: scanner{stack: p.json.sc.stack[:0]}, key: p.json.key[:0], raw: p.json.raw[:0], pending: p.json.pending[:0], start: len(p.held)}
	p.state = stJSON
}

// stepJSON reads a JSON call a byte at a time.
func (p *Parser) stepJSON(final bool) (int, bool) {
	j := &p.json
	s := p.buf
	for i := 0; i < len(s); i++ {
		c := s[i]
		d := j.sc.depth()
		ev := j.sc.step(c)
		if j.sc.failed() {
			p.jsonFailed()
			return i, false
		}
		if !p.begun {
			p.held = append(p.held, c)
			limit := maxHeld
			if j.fallback {
				limit = maxBuffered
			}
			if len(p.held) > limit {
				p.release()
				return i + 1, false
			}
		}
		if !p.jsonByte(c, d, ev) {
			return i + 1, false
		}
		if j.args == argsObject && len(j.pending)-j.safe > maxBuffered {
			p.jsonFailed() // a key or string that does not end
			return i + 1, false
		}
		if ev&evValueEnd != 0 && j.sc.depth() == 0 {
			p.endJSON()
			return i + 1, false
		}
	}
	p.flushArgs()
	if final {
		p.jsonFailed()
		return len(s), false
	}
	return len(s), true
}

// jsonByte follows the call's top-level members through byte c, read at
// depth d with scanner event ev. It is false when the call ended (its
// name is not a tool's).
func (p *Parser) jsonByte(c byte, d int, ev scanEvent) bool {
	j := &p.json
	if j.inKey {
		if len(j.key) <= maxName {
			j.key = append(j.key, c)
		}
		if ev&evKeyEnd != 0 {
			j.inKey = false
			p.jsonKey()
		}
		return true
	}
	if ev&evKeyStart != 0 && d == 1 {
		j.inKey, j.key = true, append(j.key[:0], c)
		return true
	}
	switch {
	case d == 1 && ev&evValueStart != 0:
		return p.jsonValueStart(c)
	case j.member == memberName || j.args == argsString:
		if len(j.raw) <= maxBuffered {
			j.raw = append(j.raw, c)
		}
	case j.args == argsObject:
		j.pending = append(j.pending, c)
	}
	if j.args == argsObject && j.sc.safe() {
		j.safe, j.inString = len(j.pending), j.sc.state == scanString
	}
	if ev&(evValueEnd|evNumberEnd) == 0 || j.sc.depth() != 1 || j.fallback {
		return true
	}
	// A top-level member's value ended.
	switch {
	case j.member == memberName:
		j.member = memberOther
		var name string
		if json.Unmarshal(j.raw, &name) != nil || !p.known(name) {
			p.release()
			return false
		}
		p.begin(name)
	case j.args == argsObject:
		j.args = argsDone
	case j.args == argsString:
		if json.Unmarshal(j.raw, &j.argsText) != nil {
			j.argsText = ""
		}
		j.args = argsDone
	}
	return true
}

// jsonKey reads a top-level key: which member it names, and whether the
// call must be read whole (its name does not come first).
func (p *Parser) jsonKey() {
	j := &p.json
	j.keys++
	var k string
	if json.Unmarshal(j.key, &k) != nil {
		k = ""
	}
	switch {
	case j.fallback || !p.begun && j.keys == 1 && k != "name":
		j.fallback, j.member = true, memberOther
	case k == "name" && !p.begun:
		j.member = memberName
	case (k == "arguments" || k == "parameters") && p.begun && j.args == argsNone:
		j.member = memberArgs
	default:
		j.member = memberOther
	}
}

// jsonValueStart reads the first byte of a top-level member's value.
func (p *Parser) jsonValueStart(c byte) bool {
	j := &p.json
	switch {
	case j.fallback:
	case j.member == memberName && c != '"':
		p.release() // the name is not a string
		return false
	case j.member == memberName:
		j.raw = append(j.raw[:0], c)
	case j.member == memberArgs && c == '{':
		j.args, j.pending, j.safe, j.inString = argsObject, append(j.pending[:0], c), 1, false
	case j.member == memberArgs && c == '"':
		j.args, j.raw = argsString, append(j.raw[:0], c)
	case j.member == memberArgs:
		j.args = argsDone // not an object: {}
	}
	if j.member == memberArgs {
		j.member = memberOther
	}
	return true
}

// flushArgs emits the streamed arguments that can be.
func (p *Parser) flushArgs() {
	j := &p.json
	if j.safe == 0 {
		return
	}
	p.arg(string(j.pending[:j.safe]))
	n := copy(j.pending, j.pending[j.safe:])
	j.pending, j.safe = j.pending[:n], 0
}

// endJSON ends the call whose object was read.
func (p *Parser) endJSON() {
	j := &p.json
	switch {
	case j.fallback:
		p.endFallback()
		return
	case !p.begun:
		p.release() // no name
		return
	case j.argsText != "" && isObject(j.argsText):
		p.arg(strings.TrimSpace(j.argsText))
	case j.safe > 0:
		p.flushArgs()
	default:
		if p.args.Len() == 0 {
			p.arg("{}")
		}
	}
	p.end()
	p.state = stAfterJSON
}

// endFallback decodes a call read whole: a known name, and arguments
// that are an object or a string holding one (or none).
func (p *Parser) endFallback() {
	var obj map[string]json.RawMessage
	var name string
	if json.Unmarshal(p.held[p.json.start:], &obj) != nil || json.Unmarshal(obj["name"], &name) != nil || !p.known(name) {
		p.release()
		return
	}
	args := obj["arguments"]
	if args == nil {
		args = obj["parameters"]
	}
	text := "{}"
	var str string
	switch {
	case args == nil:
	case isObject(string(args)):
		text = string(args)
	case json.Unmarshal(args, &str) == nil && isObject(str):
		text = strings.TrimSpace(str)
	default:
		p.release()
		return
	}
	p.begin(name)
	p.arg(text)
	p.end()
	p.state = stAfterJSON
}

// jsonFailed ends a JSON call that is not JSON from some byte on, or that
// the output cut off: before it began its text is content; after, its
// arguments are closed where they stopped being complete-able.
func (p *Parser) jsonFailed() {
	j := &p.json
	if !p.begun {
		p.release()
		return
	}
	switch j.args {
	case argsObject:
		p.arg(string(j.pending[:j.safe]) + j.sc.close(1, j.inString))
	case argsDone:
		p.flushArgs()
	}
	if p.args.Len() == 0 {
		p.arg("{}")
	}
	p.end()
	p.state = stText
}

// stepAfterJSON reads what follows a JSON call: white space (dropped),
// then </tool_call>, another call's '{', or Llama3's ';' before one.
// Anything else is text.
func (p *Parser) stepAfterJSON(final bool) (int, bool) {
	s := p.buf
	i := spaces(s)
	rest := s[i:]
	switch {
	case rest == "" && !final:
		return i, true
	case rest == "":
	case rest[0] == '{':
		p.held = p.held[:0]
		p.startJSON()
		return i, false
	case p.family == Llama3 && rest[0] == ';':
		p.held = append(p.held[:0], ';')
		p.state = stBody
		return i + 1, false
	case p.family != Llama3 && strings.HasPrefix(rest, toolCallClose):
		p.state = stSkipSpace
		return i + len(toolCallClose), false
	case p.family != Llama3 && !final && strings.HasPrefix(toolCallClose, rest):
		return i, true
	}
	p.state = stText
	return i, false
}

// isObject says whether s is a JSON object.
func isObject(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}
