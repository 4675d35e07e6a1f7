package toolcall

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// paramTypes are the JSON Schema types of a tool's parameters, by name:
// what a QwenXML value, which the model writes as raw text, is typed as.
type paramTypes map[string]string

// schemaTypes reads the types of the properties of a JSON Schema object:
// "type" (the first that is not "null" of a list), or that of the first
// branch of anyOf or oneOf that has one.
func schemaTypes(schema json.RawMessage) paramTypes {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make(paramTypes, len(s.Properties))
	for name, prop := range s.Properties {
		out[name] = propType(prop)
	}
	return out
}

// propType is the type of one property's schema; "" if it has none.
func propType(prop json.RawMessage) string {
	var p struct {
		Type  json.RawMessage   `json:"type"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
	}
	if json.Unmarshal(prop, &p) != nil {
		return ""
	}
	var one string
	var list []string
	switch {
	case json.Unmarshal(p.Type, &one) == nil:
		return one
	case json.Unmarshal(p.Type, &list) == nil:
		for _, t := range list {
			if t != "null" {
				return t
			}
		}
	}
	for _, branch := range append(p.AnyOf, p.OneOf...) {
		if t := propType(branch); t != "" && t != "null" {
			return t
		}
	}
	return ""
}

// typeOf is the type of the parameter key: "string" for one the schema
// does not type.
func (t paramTypes) typeOf(key string) string {
	if typ := t[key]; typ != "" {
		return typ
	}
	return "string"
}

// typed is the JSON of a value the model wrote as raw text, for a
// parameter of type typ other than "string": a boolean written as Python
// does (True, False) or in any case, null as None, else the text parsed
// as JSON; a string of the text when it does not parse.
func typed(raw, typ string) string {
	switch w := strings.ToLower(strings.TrimSpace(raw)); {
	case typ == "boolean" && (w == "true" || w == "false"):
		return w
	case (typ == "null" || typ == "boolean") && (w == "none" || w == "null"):
		return "null"
	}
	var b bytes.Buffer
	if utf8.ValidString(raw) && json.Compact(&b, []byte(raw)) == nil && b.Len() > 0 {
		return b.String()
	}
	return quote(raw)
}

// quote is s as a JSON string.
func quote(s string) string {
	b := append(make([]byte, 0, len(s)+2), '"')
	return string(append(appendEscaped(b, s), '"'))
}

// appendEscaped appends s escaped for the inside of a JSON string. Bytes
// that are not UTF-8 are U+FFFD, each; a string split at rune
// boundaries escapes to the concatenation of its pieces' escapes.
func appendEscaped(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return b
}
