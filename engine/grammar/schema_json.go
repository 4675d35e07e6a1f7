package grammar

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
)

// jnode is a parsed JSON value. Objects keep their keys in order.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	vals  []*jnode // object values, or array items
	str   string   // string, or number as written
	b     bool
	index map[string]int
}

func (n *jnode) get(k string) *jnode {
	if n.kind != 'o' {
		return nil
	}
	if n.index != nil {
		if i, ok := n.index[k]; ok {
			return n.vals[i]
		}
		return nil
	}
	for i, key := range n.keys {
		if key == k {
			return n.vals[i]
		}
	}
	return nil
}

func (n *jnode) set(k string, v *jnode) {
	for i, key := range n.keys {
		if key == k {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
	n.index = nil
}

func (n *jnode) without(drop ...string) *jnode {
	out := &jnode{kind: 'o'}
	for i, k := range n.keys {
		if !slices.Contains(drop, k) {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, n.vals[i])
		}
	}
	return out
}

type parser struct {
	dec      *json.Decoder
	maxDepth int
}

// parseJSON parses doc, refusing nesting deeper than maxDepth.
func parseJSON(doc []byte, maxDepth int) (*jnode, error) {
	p := &parser{dec: json.NewDecoder(bytes.NewReader(doc)), maxDepth: maxDepth}
	p.dec.UseNumber()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, schemaErr("", "", "invalid JSON: data after the schema")
	}
	return n, nil
}

func (p *parser) value(depth int) (*jnode, error) {
	if depth > p.maxDepth {
		return nil, &LimitError{What: "schema nesting levels", Limit: p.maxDepth}
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, schemaErr("", "", "invalid JSON: %v", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{kind: 'o'}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, schemaErr("", "", "invalid JSON: %v", err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, schemaErr("", "", "invalid JSON: an object key is not a string")
				}
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				if n.get(k) != nil {
					return nil, schemaErr(k, "", "duplicate key %q", k)
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
				if len(n.keys) == 16 {
					n.index = map[string]int{}
					for i, key := range n.keys {
						n.index[key] = i
					}
				} else if n.index != nil {
					n.index[k] = len(n.keys) - 1
				}
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, schemaErr("", "", "invalid JSON: %v", err)
			}
			return n, nil
		case '[':
			n := &jnode{kind: 'a'}
			for p.dec.More() {
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, schemaErr("", "", "invalid JSON: %v", err)
			}
			return n, nil
		}
		return nil, schemaErr("", "", "invalid JSON: unexpected %v", t)
	case string:
		return &jnode{kind: 's', str: t}, nil
	case json.Number:
		return &jnode{kind: 'n', str: string(t)}, nil
	case bool:
		return &jnode{kind: 'b', b: t}, nil
	case nil:
		return &jnode{kind: 'z'}, nil
	}
	return nil, schemaErr("", "", "invalid JSON")
}

// canon writes n compactly: strings as encoding/json escapes them (no
// HTML escaping), numbers as written, object keys in order.
func canon(b *strings.Builder, n *jnode) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(k))
			b.WriteByte(':')
			canon(b, n.vals[i])
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			canon(b, v)
		}
		b.WriteByte(']')
	case 's':
		b.WriteString(quote(n.str))
	case 'n':
		b.WriteString(n.str)
	case 'b':
		b.WriteString(strconv.FormatBool(n.b))
	case 'z':
		b.WriteString("null")
	}
}

func canonString(n *jnode) string {
	var b strings.Builder
	canon(&b, n)
	return b.String()
}

// quote is s as a JSON string, escaped as encoding/json escapes it
// without HTML escaping.
func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

func escPointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
