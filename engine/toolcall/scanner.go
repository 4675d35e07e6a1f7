package toolcall

// scanner checks JSON text (RFC 8259) a byte at a time, as a model writes
// it, and says where values and keys begin and end, so that a call's
// arguments can be streamed while they arrive and closed if the text
// breaks off. It holds only the stack of open containers.
type scanner struct {
	stack []byte // '{' or '[' of each open container
	state scanState
	lit   string // the rest of a literal being read (true, false, null)
	hex   int    // hex digits still due in a \u escape
	key   bool   // the string being read is an object key
}

type scanState uint8

const (
	scanValue      scanState = iota // a value is due: at the start, after ':', after ',' in an array
	scanValueOrEnd                  // after '['
	scanKeyOrEnd                    // after '{'
	scanKey                         // after ',' in an object
	scanColon                       // after a key
	scanCommaOrEnd                  // after a value in a container
	scanString
	scanEscape // after '\' in a string
	scanHex    // in the hex digits of \u
	scanLiteral
	scanMinus   // after a number's '-'
	scanZero    // after a number's leading 0
	scanInt     // in a number's integer digits
	scanDot     // after a number's '.'
	scanFrac    // in a number's fraction digits
	scanExpMark // after a number's 'e'
	scanExpSign // after a number's exponent sign
	scanExp     // in a number's exponent digits
	scanDone    // the top-level value is complete
	scanError   // the text is not JSON
)

// maxDepth bounds the nesting the scanner accepts, and so its memory.
const maxDepth = 512

// scanEvent says what a byte did, as a set of flags.
type scanEvent uint8

const (
	evValueStart scanEvent = 1 << iota // the byte begins a value
	evValueEnd                         // the byte ends a value: a closing quote or bracket, a literal's last letter
	evNumberEnd                        // a number ended just before the byte
	evKeyStart                         // the byte opens a key
	evKeyEnd                           // the byte closes a key
)

// depth is the number of open containers.
func (s *scanner) depth() int { return len(s.stack) }

func (s *scanner) failed() bool { return s.state == scanError }

// step reads one byte. A value's depth is the scanner's depth before the
// byte that begins it, and after the byte that ends it.
func (s *scanner) step(c byte) scanEvent {
	switch s.state {
	case scanValue, scanValueOrEnd:
		if isSpace(c) {
			return 0
		}
		if c == ']' && s.state == scanValueOrEnd {
			return s.pop('[')
		}
		return s.startValue(c)
	case scanKeyOrEnd, scanKey:
		switch {
		case isSpace(c):
			return 0
		case c == '"':
			s.state, s.key = scanString, true
			return evKeyStart
		case c == '}' && s.state == scanKeyOrEnd:
			return s.pop('{')
		}
		return s.fail()
	case scanColon:
		switch {
		case isSpace(c):
			return 0
		case c == ':':
			s.state = scanValue
			return 0
		}
		return s.fail()
	case scanCommaOrEnd:
		return s.afterValue(c)
	case scanString, scanEscape, scanHex:
		return s.stringByte(c)
	case scanLiteral:
		if c != s.lit[0] {
			return s.fail()
		}
		if s.lit = s.lit[1:]; s.lit == "" {
			return s.valueDone()
		}
		return 0
	case scanDone, scanError:
		return s.fail()
	}
	return s.numberByte(c)
}

// startValue reads the first byte of a value.
func (s *scanner) startValue(c byte) scanEvent {
	switch {
	case c == '{' || c == '[':
		if len(s.stack) >= maxDepth {
			return s.fail()
		}
		s.stack = append(s.stack, c)
		s.state = scanKeyOrEnd
		if c == '[' {
			s.state = scanValueOrEnd
		}
	case c == '"':
		s.state, s.key = scanString, false
	case c == '-':
		s.state = scanMinus
	case c == '0':
		s.state = scanZero
	case '1' <= c && c <= '9':
		s.state = scanInt
	case c == 't':
		s.state, s.lit = scanLiteral, "true"[1:]
	case c == 'f':
		s.state, s.lit = scanLiteral, "false"[1:]
	case c == 'n':
		s.state, s.lit = scanLiteral, "null"[1:]
	default:
		return s.fail()
	}
	return evValueStart
}

// stringByte reads a byte inside a string.
func (s *scanner) stringByte(c byte) scanEvent {
	switch s.state {
	case scanEscape:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.state = scanString
		case 'u':
			s.state, s.hex = scanHex, 4
		default:
			return s.fail()
		}
		return 0
	case scanHex:
		if !isHex(c) {
			return s.fail()
		}
		if s.hex--; s.hex == 0 {
			s.state = scanString
		}
		return 0
	}
	switch {
	case c == '"' && s.key:
		s.state = scanColon
		return evKeyEnd
	case c == '"':
		return s.valueDone()
	case c == '\\':
		s.state = scanEscape
	case c < 0x20:
		return s.fail()
	}
	return 0
}

// numberByte reads a byte in a number's states.
func (s *scanner) numberByte(c byte) scanEvent {
	digit := '0' <= c && c <= '9'
	switch s.state {
	case scanMinus:
		switch {
		case c == '0':
			s.state = scanZero
		case digit:
			s.state = scanInt
		default:
			return s.fail()
		}
		return 0
	case scanDot, scanExpSign:
		if !digit {
			return s.fail()
		}
		s.state++ // scanFrac, scanExp
		return 0
	case scanExpMark:
		switch {
		case c == '+' || c == '-':
			s.state = scanExpSign
		case digit:
			s.state = scanExp
		default:
			return s.fail()
		}
		return 0
	}
	// scanZero, scanInt, scanFrac, scanExp: a complete number so far.
	switch {
	case digit && s.state != scanZero:
		return 0
	case c == '.' && (s.state == scanZero || s.state == scanInt):
		s.state = scanDot
		return 0
	case (c == 'e' || c == 'E') && s.state != scanExp:
		s.state = scanExpMark
		return 0
	}
	if len(s.stack) == 0 {
		return s.fail() // a bare number is never a call
	}
	s.state = scanCommaOrEnd
	return evNumberEnd | s.afterValue(c)
}

// afterValue reads a byte after a value inside a container.
func (s *scanner) afterValue(c byte) scanEvent {
	top := s.stack[len(s.stack)-1]
	switch {
	case isSpace(c):
		return 0
	case c == ',' && top == '{':
		s.state = scanKey
		return 0
	case c == ',':
		s.state = scanValue
		return 0
	case c == '}' || c == ']':
		return s.pop(c - '}' + '{') // '}'-'{' == ']'-'['
	}
	return s.fail()
}

// pop closes the open container, which must be open.
func (s *scanner) pop(open byte) scanEvent {
	if s.stack[len(s.stack)-1] != open {
		return s.fail()
	}
	s.stack = s.stack[:len(s.stack)-1]
	return s.valueDone()
}

// valueDone notes the end of a value.
func (s *scanner) valueDone() scanEvent {
	s.state = scanCommaOrEnd
	if len(s.stack) == 0 {
		s.state = scanDone
	}
	return evValueEnd
}

func (s *scanner) fail() scanEvent {
	s.state = scanError
	return 0
}

// safe says whether the text so far can be made a complete value by
// closing what is open (a value string, the containers): what close
// writes. Inside a key, an escape, a literal, a number that cannot end
// yet, or after a ':' or ',' it cannot.
func (s *scanner) safe() bool {
	switch s.state {
	case scanString:
		return !s.key
	case scanZero, scanInt, scanFrac, scanExp, scanCommaOrEnd, scanKeyOrEnd, scanValueOrEnd, scanDone:
		return true
	}
	return false
}

// close is the text that completes, from a safe state, the value whose
// containers are stack[from:]: a closing quote if inString, then the
// containers' closing brackets.
func (s *scanner) close(from int, inString bool) string {
	b := make([]byte, 0, len(s.stack)-from+1)
	if inString {
		b = append(b, '"')
	}
	for i := len(s.stack) - 1; i >= from; i-- {
		b = append(b, s.stack[i]+2) // '{'+2 == '}', '['+2 == ']'
	}
	return string(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
