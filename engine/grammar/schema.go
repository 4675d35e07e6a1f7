package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON Schema as expressions.
//
// Schema turns the subset of JSON Schema that OpenAI structured outputs,
// zod and pydantic emit into an expression that matches only documents
// valid under the schema. Where the expression matches fewer documents
// than the schema allows, it is on purpose:
//
//   - Objects hold only their listed properties, in the declared order,
//     whatever additionalProperties says (an object without properties
//     takes any keys, with values per additionalProperties).
//   - Whitespace between tokens is bounded (see maxWS), numbers have at
//     most 16 integer digits; integers are written without fraction or
//     exponent; bounded numbers have no exponent and write a non-zero
//     fraction without trailing zeros.
//   - enum and const values are written compactly, strings escaped as
//     encoding/json does without HTML escaping, numbers as the schema
//     writes them, object keys in the schema's order.
//   - oneOf is taken as anyOf: a document that matches two branches (and
//     so is invalid under oneOf) can be generated.
//   - A schema without type takes the types its other keywords apply to
//     (properties: an object, minLength: a string, ...), any JSON value
//     nested at most Limits.MaxAnyDepth when nothing constrains it.
//   - A recursive $ref expands at most Limits.MaxRefDepth times inside
//     itself; deeper, that branch matches nothing.
//   - A pattern-constrained string holds no JSON escapes other than \"
//     and \\ where the pattern names those characters.
//   - Formats: date, time and date-time (RFC 3339, upper-case T and Z, no
//     leap seconds), uuid, email (a plain local@domain.tld subset).
//
// Keywords it cannot honour exactly are refused with a *SchemaError
// naming them (never ignored), and schemas whose automaton would be too
// large with a *LimitError.

// SchemaError is a schema Schema cannot turn into a grammar: a keyword
// it does not support, or a schema that is not valid.
type SchemaError struct {
	Keyword string // the keyword at fault; "" when none is
	Path    string // JSON Pointer to the schema (not the keyword) at fault
	Message string
}

func (e *SchemaError) Error() string {
	if e.Path == "" {
		return "grammar: schema: " + e.Message
	}
	return "grammar: schema at " + e.Path + ": " + e.Message
}

func schemaErr(keyword, path, format string, args ...any) *SchemaError {
	return &SchemaError{Keyword: keyword, Path: path, Message: fmt.Sprintf(format, args...)}
}

func unsupported(keyword, path string) *SchemaError {
	return schemaErr(keyword, path, "%s is not supported", keyword)
}

// Schema compiles a JSON Schema to an expression matching JSON documents
// valid under it (see the notes at the top of this file for where it
// matches fewer). Errors are *SchemaError or *LimitError.
func Schema(schema []byte, lim Limits) (*Expr, error) {
	c, err := newConv(schema, lim)
	if err != nil {
		return nil, err
	}
	c.active[""] = 1
	x, err := c.value(c.root, "", 0)
	if err != nil {
		return nil, err
	}
	if x.op == opFail {
		if c.cut {
			return nil, schemaErr("$ref", "", "the recursion has no finite instance within %d expansions", c.lim.MaxRefDepth)
		}
		return nil, schemaErr("", "", "no document is valid under the schema")
	}
	if err := c.checkSize(x); err != nil {
		return nil, err
	}
	return x, nil
}

// Prop is one property of an object schema, for tool-call formats that
// write each argument on its own.
type Prop struct {
	Name     string
	Required bool
	// Value is the property's JSON value.
	Value *Expr
	// Raw, when the property is a plain string (type string, possibly
	// with enum, const, minLength, maxLength or format), is the string's
	// text unquoted and unescaped: no control bytes and no '<', so that
	// it cannot run into a closing tag. Nil otherwise.
	Raw *Expr
}

// SchemaObject returns the properties of an object schema in declared
// order. An empty schema (no bytes, {}, true) has none. A schema that is
// not an object schema with properties is a *SchemaError.
func SchemaObject(schema []byte, lim Limits) ([]Prop, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, nil
	}
	c, err := newConv(schema, lim)
	if err != nil {
		return nil, err
	}
	root, path := c.root, ""
	c.active[""] = 1
	for i := 0; root.kind == 'o' && root.get("$ref") != nil; i++ {
		if i > lim.MaxDepth {
			return nil, &LimitError{What: "schema nesting levels", Limit: lim.MaxDepth}
		}
		ref := root.get("$ref")
		if ref.kind != 's' {
			return nil, schemaErr("$ref", path, "$ref must be a string")
		}
		if root, path, err = c.resolve(ref.str, path); err != nil {
			return nil, err
		}
	}
	if root.kind == 'b' && root.b || root.kind == 'o' && len(root.keys) == 0 {
		return nil, nil
	}
	if root.kind != 'o' {
		return nil, schemaErr("type", path, "a tool's parameters must be an object schema")
	}
	if t := root.get("type"); t != nil && (t.kind != 's' || t.str != "object") {
		return nil, schemaErr("type", path, "a tool's parameters must have type object")
	}
	for _, k := range root.keys {
		switch {
		case annotation(k), k == "$defs", k == "definitions", k == "type", k == "properties",
			k == "required", k == "additionalProperties":
		default:
			return nil, schemaErr(k, path, "%s is not supported in a tool's parameters", k)
		}
	}
	// Validate the object as a whole (required names, keywords).
	if _, err := c.value(root, path, 0); err != nil {
		return nil, err
	}
	props := root.get("properties")
	if props == nil {
		return nil, nil
	}
	required, err := requiredSet(root, path)
	if err != nil {
		return nil, err
	}
	var out []Prop
	for i, name := range props.keys {
		ppath := path + "/properties/" + escPointer(name)
		v, err := c.value(props.vals[i], ppath, 1)
		if err != nil {
			return nil, err
		}
		raw, err := c.raw(props.vals[i], ppath)
		if err != nil {
			return nil, err
		}
		out = append(out, Prop{Name: name, Required: required[name], Value: v, Raw: raw})
	}
	return out, nil
}

// ---- parsing: JSON with object keys in order ----

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

// ---- conversion ----

type conv struct {
	root   *jnode
	lim    Limits
	active map[string]int   // $ref targets being expanded, by pointer
	memo   map[string]*Expr // $ref targets expanded without recursion
	recur  int              // recursive $refs met so far
	cut    bool             // a recursive $ref was cut off
	any    *Expr
}

func newConv(schema []byte, lim Limits) (*conv, error) {
	if lim.MaxStates == 0 {
		lim = DefaultLimits()
	}
	// A schema level takes at most a few JSON levels (properties, a
	// name, the schema); a deeper document is refused while parsing.
	root, err := parseJSON(schema, 4*lim.MaxDepth+8)
	if err != nil {
		return nil, err
	}
	return &conv{root: root, lim: lim, active: map[string]int{}, memo: map[string]*Expr{}}, nil
}

func (c *conv) anyValue() *Expr {
	if c.any == nil {
		c.any = AnyJSON(c.lim.MaxAnyDepth)
	}
	return c.any
}

// annotation reports whether k is a keyword that does not constrain.
func annotation(k string) bool {
	switch k {
	case "description", "title", "default", "examples", "$schema", "$id", "$comment",
		"deprecated", "readOnly", "writeOnly", "strict", "discriminator":
		return true
	}
	return strings.HasPrefix(k, "x-")
}

// keyword kinds: which type a keyword applies to.
var keywordType = map[string]string{
	"properties": "object", "required": "object", "additionalProperties": "object",
	"minProperties": "object", "maxProperties": "object", "patternProperties": "object",
	"propertyNames": "object", "dependentRequired": "object", "dependentSchemas": "object",
	"dependencies": "object", "unevaluatedProperties": "object",
	"items": "array", "prefixItems": "array", "minItems": "array", "maxItems": "array",
	"uniqueItems": "array", "contains": "array", "minContains": "array", "maxContains": "array",
	"additionalItems": "array", "unevaluatedItems": "array",
	"minLength": "string", "maxLength": "string", "pattern": "string", "format": "string",
	"minimum": "number", "maximum": "number", "exclusiveMinimum": "number",
	"exclusiveMaximum": "number", "multipleOf": "number",
}

// general keywords handled before the type's.
var generalKeyword = map[string]bool{
	"type": true, "nullable": true, "enum": true, "const": true, "$ref": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true,
	"else": true, "$defs": true, "definitions": true,
}

var allTypes = []string{"null", "boolean", "object", "array", "string", "integer", "number"}

// constraining reports the keywords of n other than annotations and
// definitions.
func constraining(n *jnode) []string {
	var out []string
	for _, k := range n.keys {
		if !annotation(k) && k != "$defs" && k != "definitions" {
			out = append(out, k)
		}
	}
	return out
}

// value is the expression for the schema n found at path.
func (c *conv) value(n *jnode, path string, depth int) (*Expr, error) {
	if depth > c.lim.MaxDepth {
		return nil, &LimitError{What: "schema nesting levels", Limit: c.lim.MaxDepth}
	}
	switch n.kind {
	case 'b':
		if n.b {
			return c.anyValue(), nil
		}
		return Fail(), nil
	case 'o':
	default:
		return nil, schemaErr("", path, "a schema must be an object or a boolean")
	}
	for _, k := range n.keys {
		if annotation(k) || generalKeyword[k] || keywordType[k] != "" {
			continue
		}
		return nil, schemaErr(k, path, "%s is not a supported keyword", k)
	}
	for _, k := range []string{"not", "if", "then", "else"} {
		if n.get(k) != nil {
			return nil, unsupported(k, path)
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if d := n.get(k); d != nil && d.kind != 'o' {
			return nil, schemaErr(k, path, "%s must be an object", k)
		}
	}
	cons := constraining(n)
	if ref := n.get("$ref"); ref != nil {
		if len(cons) == 1 {
			return c.ref(ref, path, depth)
		}
		return c.allOf(n, path, depth)
	}
	if n.get("allOf") != nil {
		return c.allOf(n, path, depth)
	}
	any, one := n.get("anyOf"), n.get("oneOf")
	if any != nil && one != nil {
		return nil, schemaErr("oneOf", path, "oneOf beside anyOf is not supported")
	}
	if one != nil {
		any = one
	}
	if any != nil {
		kw := "anyOf"
		if one != nil {
			kw = "oneOf"
		}
		if any.kind != 'a' || len(any.vals) == 0 {
			return nil, schemaErr(kw, path, "%s must be a non-empty array", kw)
		}
		rest := n.without(kw)
		plain := len(cons) == 1
		var alts []*Expr
		for i, b := range any.vals {
			bpath := fmt.Sprintf("%s/%s/%d", path, kw, i)
			var x *Expr
			var err error
			if plain {
				x, err = c.value(b, bpath, depth+1)
			} else {
				x, err = c.mergeValue([]*jnode{rest, b}, []string{path, bpath}, path, depth+1)
			}
			if err != nil {
				return nil, err
			}
			alts = append(alts, x)
		}
		return Alt(alts...), nil
	}
	return c.typed(n, path, depth)
}

// ref expands a $ref.
func (c *conv) ref(ref *jnode, path string, depth int) (*Expr, error) {
	if ref.kind != 's' {
		return nil, schemaErr("$ref", path, "$ref must be a string")
	}
	target, tpath, err := c.resolve(ref.str, path)
	if err != nil {
		return nil, err
	}
	if x, ok := c.memo[tpath]; ok {
		return x, nil
	}
	if c.active[tpath] > 0 {
		c.recur++
		if c.active[tpath] > c.lim.MaxRefDepth {
			c.cut = true
			return Fail(), nil
		}
	}
	recur := c.recur
	c.active[tpath]++
	x, err := c.value(target, tpath, depth+1)
	c.active[tpath]--
	if err != nil {
		return nil, err
	}
	if c.recur == recur && c.active[tpath] == 0 {
		c.memo[tpath] = x
	}
	return x, nil
}

// resolve finds the schema a local $ref points to, and its pointer.
func (c *conv) resolve(ref, path string) (*jnode, string, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, "", schemaErr("$ref", path, "remote reference %q is not supported", ref)
	}
	frag := ref[1:]
	if strings.Contains(frag, "%") {
		u, err := url.PathUnescape(frag)
		if err != nil {
			return nil, "", schemaErr("$ref", path, "bad reference %q", ref)
		}
		frag = u
	}
	if frag == "" {
		return c.root, "", nil
	}
	if frag[0] != '/' {
		return nil, "", schemaErr("$ref", path, "reference %q is not a JSON pointer", ref)
	}
	n := c.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next *jnode
		switch n.kind {
		case 'o':
			next = n.get(tok)
		case 'a':
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.vals) {
				next = n.vals[i]
			}
		}
		if next == nil {
			return nil, "", schemaErr("$ref", path, "reference %q not found", ref)
		}
		n = next
	}
	return n, frag, nil
}

// allOf merges n's allOf branches, its $ref and its other keywords into
// one schema.
func (c *conv) allOf(n *jnode, path string, depth int) (*Expr, error) {
	parts := []*jnode{n.without("allOf", "$ref")}
	paths := []string{path}
	if ref := n.get("$ref"); ref != nil {
		if ref.kind != 's' {
			return nil, schemaErr("$ref", path, "$ref must be a string")
		}
		parts = append(parts, &jnode{kind: 'o', keys: []string{"$ref"}, vals: []*jnode{ref}})
		paths = append(paths, path)
	}
	if all := n.get("allOf"); all != nil {
		if all.kind != 'a' || len(all.vals) == 0 {
			return nil, schemaErr("allOf", path, "allOf must be a non-empty array")
		}
		for i, b := range all.vals {
			parts = append(parts, b)
			paths = append(paths, fmt.Sprintf("%s/allOf/%d", path, i))
		}
	}
	return c.mergeValue(parts, paths, path, depth)
}

// mergeValue is the expression for the conjunction of the schemas.
func (c *conv) mergeValue(parts []*jnode, paths []string, path string, depth int) (*Expr, error) {
	flat, err := c.flatten(parts, paths, depth)
	if err != nil {
		return nil, err
	}
	m := &jnode{kind: 'o'}
	for _, p := range flat {
		if p.kind == 'b' {
			if !p.b {
				return Fail(), nil
			}
			continue
		}
		if m, err = c.merge(m, p, path); err != nil {
			return nil, err
		}
	}
	if len(constraining(m)) == 0 && len(flat) > 0 {
		return c.anyValue(), nil
	}
	return c.value(m, path, depth+1)
}

// flatten resolves $refs and nested allOfs of the parts.
func (c *conv) flatten(parts []*jnode, paths []string, depth int) ([]*jnode, error) {
	if depth > c.lim.MaxDepth {
		return nil, &LimitError{What: "schema nesting levels", Limit: c.lim.MaxDepth}
	}
	var out []*jnode
	for i, p := range parts {
		if p.kind != 'o' {
			if p.kind != 'b' {
				return nil, schemaErr("", paths[i], "a schema must be an object or a boolean")
			}
			out = append(out, p)
			continue
		}
		var sub []*jnode
		var subPaths []string
		if ref := p.get("$ref"); ref != nil {
			if ref.kind != 's' {
				return nil, schemaErr("$ref", paths[i], "$ref must be a string")
			}
			t, tp, err := c.resolve(ref.str, paths[i])
			if err != nil {
				return nil, err
			}
			sub, subPaths = append(sub, t), append(subPaths, tp)
		}
		if all := p.get("allOf"); all != nil {
			if all.kind != 'a' {
				return nil, schemaErr("allOf", paths[i], "allOf must be an array")
			}
			for j, b := range all.vals {
				sub, subPaths = append(sub, b), append(subPaths, fmt.Sprintf("%s/allOf/%d", paths[i], j))
			}
		}
		if sub == nil {
			out = append(out, p)
			continue
		}
		out = append(out, p.without("$ref", "allOf"))
		more, err := c.flatten(sub, subPaths, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// merge is the conjunction of two schemas without $ref or allOf, as one
// schema; keywords it cannot combine are a SchemaError.
func (c *conv) merge(a, b *jnode, path string) (*jnode, error) {
	a = normType(a)
	b = normType(b)
	out := a.without()
	for i, k := range b.keys {
		v := b.vals[i]
		if annotation(k) || k == "$defs" || k == "definitions" {
			continue
		}
		old := out.get(k)
		if old == nil {
			out.set(k, v)
			continue
		}
		switch k {
		case "type":
			out.set(k, intersectTypes(old, v))
		case "properties":
			if old.kind != 'o' || v.kind != 'o' {
				return nil, schemaErr(k, path, "properties must be an object")
			}
			p := old.without()
			for j, name := range v.keys {
				if o := p.get(name); o != nil {
					p.set(name, &jnode{kind: 'o', keys: []string{"allOf"}, vals: []*jnode{{kind: 'a', vals: []*jnode{o, v.vals[j]}}}})
				} else {
					p.set(name, v.vals[j])
				}
			}
			out.set(k, p)
		case "required":
			r := &jnode{kind: 'a', vals: slices.Clone(old.vals)}
			for _, x := range v.vals {
				if !slices.ContainsFunc(r.vals, func(y *jnode) bool { return y.kind == 's' && x.kind == 's' && y.str == x.str }) {
					r.vals = append(r.vals, x)
				}
			}
			out.set(k, r)
		case "items", "additionalProperties":
			out.set(k, &jnode{kind: 'o', keys: []string{"allOf"}, vals: []*jnode{{kind: 'a', vals: []*jnode{old, v}}}})
		case "minimum", "minLength", "minItems", "minProperties":
			if numLess(old, v) {
				out.set(k, v)
			}
		case "maximum", "maxLength", "maxItems", "maxProperties":
			if numLess(v, old) {
				out.set(k, v)
			}
		case "enum":
			e := &jnode{kind: 'a'}
			for _, x := range old.vals {
				cx := canonString(x)
				if slices.ContainsFunc(v.vals, func(y *jnode) bool { return canonString(y) == cx }) {
					e.vals = append(e.vals, x)
				}
			}
			out.set(k, e)
		default:
			if canonString(old) != canonString(v) {
				return nil, schemaErr("allOf", path, "cannot combine two different %s", k)
			}
		}
	}
	// Properties one side lists and the other's additionalProperties
	// forbids or constrains.
	if err := mergeAdditional(out, a, b, path); err != nil {
		return nil, err
	}
	if err := mergeAdditional(out, b, a, path); err != nil {
		return nil, err
	}
	return out, nil
}

// mergeAdditional applies side's additionalProperties to the merged
// properties that side does not list.
func mergeAdditional(out, side, other *jnode, path string) error {
	ap := side.get("additionalProperties")
	if ap == nil || ap.kind == 'b' && ap.b {
		return nil
	}
	props := out.get("properties")
	if props == nil || props.kind != 'o' {
		return nil
	}
	listed := side.get("properties")
	p := &jnode{kind: 'o'}
	for i, name := range props.keys {
		if listed != nil && listed.get(name) != nil {
			p.set(name, props.vals[i])
			continue
		}
		if ap.kind == 'b' {
			continue // forbidden: not generated (required names then fail)
		}
		p.set(name, &jnode{kind: 'o', keys: []string{"allOf"}, vals: []*jnode{{kind: 'a', vals: []*jnode{props.vals[i], ap}}}})
	}
	out.set("properties", p)
	return nil
}

func numLess(a, b *jnode) bool {
	x, ok1 := new(big.Rat).SetString(a.str)
	y, ok2 := new(big.Rat).SetString(b.str)
	return a.kind == 'n' && b.kind == 'n' && ok1 && ok2 && x.Cmp(y) < 0
}

// normType folds nullable into type.
func normType(n *jnode) *jnode {
	nl := n.get("nullable")
	if nl == nil {
		return n
	}
	out := n.without("nullable")
	t := n.get("type")
	if nl.kind == 'b' && nl.b && t != nil {
		ts := &jnode{kind: 'a', vals: []*jnode{{kind: 's', str: "null"}}}
		switch t.kind {
		case 's':
			ts.vals = append(ts.vals, t)
		case 'a':
			ts.vals = append(ts.vals, t.vals...)
		}
		out.set("type", ts)
	}
	return out
}

func typeNames(t *jnode) []string {
	switch t.kind {
	case 's':
		return []string{t.str}
	case 'a':
		var out []string
		for _, v := range t.vals {
			if v.kind == 's' {
				out = append(out, v.str)
			}
		}
		return out
	}
	return nil
}

func intersectTypes(a, b *jnode) *jnode {
	as, bs := typeNames(a), typeNames(b)
	out := &jnode{kind: 'a', vals: []*jnode{}}
	for _, t := range as {
		if slices.Contains(bs, t) || t == "integer" && slices.Contains(bs, "number") {
			out.vals = append(out.vals, &jnode{kind: 's', str: t})
		} else if t == "number" && slices.Contains(bs, "integer") {
			out.vals = append(out.vals, &jnode{kind: 's', str: "integer"})
		}
	}
	return out
}

// types is the set of JSON types n allows.
func (c *conv) types(n *jnode, path string) (map[string]bool, error) {
	set := map[string]bool{}
	t := n.get("type")
	if t != nil {
		switch t.kind {
		case 's':
			set[t.str] = true
		case 'a':
			for _, v := range t.vals {
				if v.kind != 's' {
					return nil, schemaErr("type", path, "type must be a string or an array of strings")
				}
				set[v.str] = true
			}
		default:
			return nil, schemaErr("type", path, "type must be a string or an array of strings")
		}
		for k := range set {
			if !slices.Contains(allTypes, k) {
				return nil, schemaErr("type", path, "unknown type %q", k)
			}
		}
	}
	if nl := n.get("nullable"); nl != nil {
		if nl.kind != 'b' {
			return nil, schemaErr("nullable", path, "nullable must be a boolean")
		}
		if nl.b && t != nil {
			set["null"] = true
		}
	}
	if t != nil {
		return set, nil
	}
	if n.get("enum") != nil || n.get("const") != nil {
		for _, k := range allTypes {
			set[k] = true
		}
		return set, nil
	}
	for _, k := range n.keys {
		if kt := keywordType[k]; kt != "" {
			set[kt] = true
		}
	}
	return set, nil
}

// typed is the expression for a schema without $ref or combinators.
func (c *conv) typed(n *jnode, path string, depth int) (*Expr, error) {
	set, err := c.types(n, path)
	if err != nil {
		return nil, err
	}
	enum, hasEnum, err := c.enumValues(n, path)
	if err != nil {
		return nil, err
	}
	if len(set) == 0 {
		if n.get("type") != nil {
			return Fail(), nil
		}
		if hasEnum {
			return c.enumExpr(enum, nil, path)
		}
		return c.anyValue(), nil
	}
	var alts []*Expr
	for _, t := range allTypes {
		if !set[t] || t == "integer" && set["number"] {
			continue
		}
		var x *Expr
		var err error
		switch t {
		case "null":
			x = Lit("null")
		case "boolean":
			x = Alt(Lit("true"), Lit("false"))
		case "string":
			x, err = c.stringExpr(n, path)
		case "integer":
			x, err = c.integerExpr(n, path)
		case "number":
			x, err = c.numberExpr(n, path)
		case "object":
			x, err = c.objectExpr(n, path, depth)
		case "array":
			x, err = c.arrayExpr(n, path, depth)
		}
		if err != nil {
			return nil, err
		}
		alts = append(alts, x)
	}
	x := Alt(alts...)
	if !hasEnum {
		return x, nil
	}
	// Keep the enum values of an allowed type that the rest of the
	// schema also accepts.
	var kept []*jnode
	for _, v := range enum {
		if set[kindType(v)] || kindType(v) == "number" && set["integer"] && isInteger(v.str) {
			kept = append(kept, v)
		}
	}
	if len(constraining(n.without("type", "nullable", "enum", "const"))) == 0 {
		return c.enumExpr(kept, nil, path)
	}
	if err := c.checkSize(x); err != nil {
		return nil, err
	}
	g, err := Compile(nil, x, c.lim)
	if err != nil {
		return nil, err
	}
	return c.enumExpr(kept, g, path)
}

func kindType(v *jnode) string {
	switch v.kind {
	case 'o':
		return "object"
	case 'a':
		return "array"
	case 's':
		return "string"
	case 'n':
		return "number"
	case 'b':
		return "boolean"
	}
	return "null"
}

// enumValues is the values enum and const allow (both: those in both).
func (c *conv) enumValues(n *jnode, path string) ([]*jnode, bool, error) {
	e, k := n.get("enum"), n.get("const")
	if e == nil && k == nil {
		return nil, false, nil
	}
	var vals []*jnode
	if e != nil {
		if e.kind != 'a' {
			return nil, false, schemaErr("enum", path, "enum must be an array")
		}
		vals = e.vals
	}
	if k != nil {
		if e == nil {
			return []*jnode{k}, true, nil
		}
		ck := canonString(k)
		vals = nil
		for _, v := range e.vals {
			if canonString(v) == ck {
				vals = []*jnode{k}
			}
		}
	}
	return vals, true, nil
}

// enumExpr is a trie of the values' canonical forms; with g, only those
// g matches.
func (c *conv) enumExpr(vals []*jnode, g *Grammar, path string) (*Expr, error) {
	var lits []string
	total := 0
	for _, v := range vals {
		s := canonString(v)
		if g != nil && !g.MatchString(s) {
			continue
		}
		total += len(s)
		if total > 4*c.lim.MaxStates {
			return nil, &LimitError{What: "grammar states", Limit: c.lim.MaxStates}
		}
		lits = append(lits, s)
	}
	return trie(lits), nil
}

// trie is the alternatives of the strings with shared prefixes.
func trie(lits []string) *Expr {
	sort.Strings(lits)
	lits = slices.Compact(lits)
	return trieOf(lits, 0)
}

// trieOf matches the sorted strings lits with their first at bytes cut.
func trieOf(lits []string, at int) *Expr {
	if len(lits) == 0 {
		return Fail()
	}
	// The longest prefix all share.
	first, last := lits[0][at:], lits[len(lits)-1][at:]
	p := 0
	for p < len(first) && p < len(last) && first[p] == last[p] {
		p++
	}
	prefix := Lit(first[:p])
	at += p
	var alts []*Expr
	i := 0
	if len(lits[0]) == at {
		alts = append(alts, Empty())
		i = 1
	}
	for i < len(lits) {
		c := lits[i][at]
		j := i + 1
		for j < len(lits) && lits[j][at] == c {
			j++
		}
		alts = append(alts, trieOf(lits[i:j], at))
		i = j
	}
	if len(alts) == 1 {
		return Seq(prefix, alts[0])
	}
	return Seq(prefix, Alt(alts...))
}

// ---- strings ----

func (c *conv) intKeyword(n *jnode, k, path string) (int, bool, error) {
	v := n.get(k)
	if v == nil {
		return 0, false, nil
	}
	if v.kind != 'n' {
		return 0, false, schemaErr(k, path, "%s must be a number", k)
	}
	r, ok := parseNumber(v.str)
	if !ok || !r.IsInt() || r.Sign() < 0 {
		return 0, false, schemaErr(k, path, "%s must be a non-negative integer", k)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > 1<<30 {
		return 1 << 30, true, nil
	}
	return int(r.Num().Int64()), true, nil
}

func (c *conv) lengths(n *jnode, path string) (int, int, bool, error) {
	lo, hasLo, err := c.intKeyword(n, "minLength", path)
	if err != nil {
		return 0, 0, false, err
	}
	hi, hasHi, err := c.intKeyword(n, "maxLength", path)
	if err != nil {
		return 0, 0, false, err
	}
	if !hasHi {
		hi = -1
	}
	if lo > c.lim.MaxStates || hi > c.lim.MaxStates {
		return 0, 0, false, &LimitError{What: "grammar states", Limit: c.lim.MaxStates}
	}
	return lo, hi, hasLo || hasHi, nil
}

func (c *conv) stringExpr(n *jnode, path string) (*Expr, error) {
	lo, hi, bounded, err := c.lengths(n, path)
	if err != nil {
		return nil, err
	}
	f, p := n.get("format"), n.get("pattern")
	if f != nil && p != nil {
		return nil, schemaErr("pattern", path, "pattern beside format is not supported")
	}
	if (f != nil || p != nil) && bounded {
		kw := "minLength"
		if n.get(kw) == nil {
			kw = "maxLength"
		}
		return nil, schemaErr(kw, path, "%s beside format or pattern is not supported", kw)
	}
	if f != nil {
		x, err := formatExpr(f, path)
		if err != nil {
			return nil, err
		}
		return Seq(Byte('"'), x, Byte('"')), nil
	}
	if p != nil {
		if p.kind != 's' {
			return nil, schemaErr("pattern", path, "pattern must be a string")
		}
		x, err := patternExpr(p.str, path, c.lim)
		if err != nil {
			return nil, err
		}
		return Seq(Byte('"'), x, Byte('"')), nil
	}
	return jsonStringLen(lo, hi), nil
}

// raw is the raw-text expression of a plain string property, or nil.
func (c *conv) raw(n *jnode, path string) (*Expr, error) {
	for i := 0; n.kind == 'o' && n.get("$ref") != nil && len(constraining(n)) == 1; i++ {
		if i > c.lim.MaxDepth {
			return nil, nil
		}
		t, tp, err := c.resolve(n.get("$ref").str, path)
		if err != nil {
			return nil, err
		}
		n, path = t, tp
	}
	if n.kind != 'o' {
		return nil, nil
	}
	if t := n.get("type"); t == nil || t.kind != 's' || t.str != "string" {
		return nil, nil
	}
	for _, k := range constraining(n) {
		switch k {
		case "type", "enum", "const", "minLength", "maxLength", "format":
		default:
			return nil, nil
		}
	}
	if n.get("nullable") != nil && n.get("nullable").b {
		return nil, nil
	}
	lo, hi, bounded, err := c.lengths(n, path)
	if err != nil {
		return nil, err
	}
	vals, hasEnum, err := c.enumValues(n, path)
	if err != nil {
		return nil, err
	}
	if hasEnum {
		var lits []string
		for _, v := range vals {
			if v.kind != 's' || strings.ContainsFunc(v.str, func(r rune) bool { return r < 0x20 || r == '<' }) {
				continue
			}
			if l := utf8.RuneCountInString(v.str); bounded && (l < lo || hi >= 0 && l > hi) {
				continue
			}
			lits = append(lits, v.str)
		}
		if n.get("format") != nil {
			return nil, nil
		}
		return trie(lits), nil
	}
	if f := n.get("format"); f != nil {
		if bounded {
			return nil, nil
		}
		return formatExpr(f, path)
	}
	return rawStringLen(lo, hi), nil
}

// formatExpr is the text (without quotes) of a string format.
func formatExpr(f *jnode, path string) (*Expr, error) {
	if f.kind != 's' {
		return nil, schemaErr("format", path, "format must be a string")
	}
	d := digit()
	two := func(lo, hi string) *Expr { return digitRange(lo, hi) }
	date := func() *Expr {
		day31 := Alt(Seq(Byte('0'), Class(rng('1', '9'))), Seq(Class(rng('1', '2')), d), Seq(Byte('3'), Class(rng('0', '1'))))
		day30 := Alt(Seq(Byte('0'), Class(rng('1', '9'))), Seq(Class(rng('1', '2')), d), Lit("30"))
		day28 := Alt(Seq(Byte('0'), Class(rng('1', '9'))), Seq(Byte('1'), d), Seq(Byte('2'), Class(rng('0', '8'))))
		m31 := Alt(Lit("01"), Lit("03"), Lit("05"), Lit("07"), Lit("08"), Lit("10"), Lit("12"))
		m30 := Alt(Lit("04"), Lit("06"), Lit("09"), Lit("11"))
		mod4 := Alt(Seq(Byte('0'), Class(rng('4', '4'), rng('8', '8'))), Seq(Class(rng('2', '2'), rng('4', '4'), rng('6', '6'), rng('8', '8')), Class(rng('0', '0'), rng('4', '4'), rng('8', '8'))), Seq(Class(rng('1', '1'), rng('3', '3'), rng('5', '5'), rng('7', '7'), rng('9', '9')), Class(rng('2', '2'), rng('6', '6'))))
		leap := Alt(Seq(d, d, mod4), Seq(mod4, Lit("00")), Lit("0000"))
		year := Repeat(d, 4, 4)
		return Alt(
			Seq(year, Byte('-'), Alt(Seq(m31, Byte('-'), day31), Seq(m30, Byte('-'), day30), Seq(Lit("02-"), day28))),
			Seq(leap, Lit("-02-29")),
		)
	}
	tm := func() *Expr {
		hm := Seq(two("00", "23"), Byte(':'), two("00", "59"))
		return Seq(hm, Byte(':'), two("00", "59"), Opt(Seq(Byte('.'), Repeat(d, 1, 9))),
			Alt(Byte('Z'), Seq(Class(rng('+', '+'), rng('-', '-')), hm)))
	}
	switch f.str {
	case "date":
		return date(), nil
	case "time":
		return tm(), nil
	case "date-time":
		return Seq(date(), Byte('T'), tm()), nil
	case "uuid":
		h := hexDigit()
		return Seq(Repeat(h, 8, 8), Byte('-'), Repeat(h, 4, 4), Byte('-'), Repeat(h, 4, 4), Byte('-'), Repeat(h, 4, 4), Byte('-'), Repeat(h, 12, 12)), nil
	case "email":
		alnum := Class(rng('a', 'z'), rng('A', 'Z'), rng('0', '9'))
		atom := Repeat(Class(rng('a', 'z'), rng('A', 'Z'), rng('0', '9'), rng('_', '_'), rng('%', '%'), rng('+', '+'), rng('-', '-')), 1, 16)
		local := Seq(atom, Repeat(Seq(Byte('.'), atom), 0, 2))
		label := Seq(Repeat(alnum, 1, 20), Opt(Seq(Byte('-'), Repeat(alnum, 1, 20))))
		tld := Repeat(Class(rng('a', 'z'), rng('A', 'Z')), 2, 10)
		return Seq(local, Byte('@'), Repeat(Seq(label, Byte('.')), 1, 3), tld), nil
	}
	return nil, schemaErr("format", path, "format %q is not supported", f.str)
}

// ---- numbers ----

// maxInt is the largest integer part generated: 16 digits.
const maxInt = int64(9_999_999_999_999_999)

// parseNumber parses a JSON number exactly, refusing huge exponents.
func parseNumber(s string) (*big.Rat, bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 400 || e < -400 {
			return nil, false
		}
	}
	if len(s) > 1000 {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func isInteger(s string) bool {
	r, ok := parseNumber(s)
	return ok && r.IsInt()
}

// bound is one side of a numeric range, an integer after rounding.
type bound struct {
	set  bool
	v    *big.Rat
	excl bool
}

// bounds reads minimum, maximum and their exclusive forms (draft 2020
// numbers and draft 4 booleans).
func (c *conv) bounds(n *jnode, path string) (lo, hi bound, err error) {
	read := func(k string) (*big.Rat, error) {
		v := n.get(k)
		if v == nil || v.kind == 'b' {
			return nil, nil
		}
		if v.kind != 'n' {
			return nil, schemaErr(k, path, "%s must be a number", k)
		}
		r, ok := parseNumber(v.str)
		if !ok {
			return nil, schemaErr(k, path, "%s is out of range", k)
		}
		return r, nil
	}
	side := func(incl, excl string, pick func(a, b *big.Rat) bool) (bound, error) {
		var b bound
		r, err := read(incl)
		if err != nil {
			return b, err
		}
		if r != nil {
			b = bound{set: true, v: r}
		}
		ev := n.get(excl)
		if ev != nil && ev.kind == 'b' {
			if ev.b && r == nil {
				return b, schemaErr(excl, path, "%s true needs %s", excl, incl)
			}
			b.excl = ev.b
			return b, nil
		}
		x, err := read(excl)
		if err != nil {
			return b, err
		}
		if x != nil && (!b.set || pick(x, b.v)) {
			b = bound{set: true, v: x, excl: true}
		}
		return b, nil
	}
	if lo, err = side("minimum", "exclusiveMinimum", func(a, b *big.Rat) bool { return a.Cmp(b) >= 0 }); err != nil {
		return
	}
	hi, err = side("maximum", "exclusiveMaximum", func(a, b *big.Rat) bool { return a.Cmp(b) <= 0 })
	return
}

func ratFloor(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() < 0 {
		q.Sub(q, big.NewInt(1))
	}
	return q
}

// clampInt is x within -maxInt-1..maxInt+1: a bound past what is
// generated stays past it, so that a range beyond leaves nothing.
func clampInt(x *big.Int) int64 {
	if x.Cmp(big.NewInt(maxInt)) > 0 {
		return maxInt + 1
	}
	if x.Cmp(big.NewInt(-maxInt)) < 0 {
		return -maxInt - 1
	}
	return x.Int64()
}

func (c *conv) integerExpr(n *jnode, path string) (*Expr, error) {
	if m := n.get("multipleOf"); m != nil {
		if r, ok := parseNumber(m.str); m.kind != 'n' || !ok || r.Cmp(big.NewRat(1, 1)) != 0 {
			return nil, unsupported("multipleOf", path)
		}
	}
	lo, hi, err := c.bounds(n, path)
	if err != nil {
		return nil, err
	}
	if !lo.set && !hi.set {
		return JSONInteger(), nil
	}
	l, h := -maxInt, maxInt
	if lo.set {
		// The least integer above (or at) the bound.
		f := ratFloor(lo.v)
		if !lo.excl && lo.v.IsInt() {
			f.Sub(f, big.NewInt(1))
		}
		l = clampInt(f.Add(f, big.NewInt(1)))
	}
	if hi.set {
		// The greatest integer below (or at) the bound.
		f := ratFloor(hi.v)
		if hi.excl && hi.v.IsInt() {
			f.Sub(f, big.NewInt(1))
		}
		h = clampInt(f)
	}
	return intRange(l, h), nil
}

func (c *conv) numberExpr(n *jnode, path string) (*Expr, error) {
	if n.get("multipleOf") != nil {
		return nil, unsupported("multipleOf", path)
	}
	lo, hi, err := c.bounds(n, path)
	if err != nil {
		return nil, err
	}
	if !lo.set && !hi.set {
		return JSONNumber(), nil
	}
	for _, b := range []struct {
		b  bound
		kw []string
	}{{lo, []string{"minimum", "exclusiveMinimum"}}, {hi, []string{"maximum", "exclusiveMaximum"}}} {
		if b.b.set && !b.b.v.IsInt() {
			kw := b.kw[0]
			if v := n.get(b.kw[1]); v != nil && v.kind == 'n' {
				if r, _ := parseNumber(v.str); r != nil && r.Cmp(b.b.v) == 0 {
					kw = b.kw[1]
				}
			}
			return nil, schemaErr(kw, path, "a number bound that is not an integer (%s) is not supported", kw)
		}
	}
	toInt := func(b bound) (int64, bool) {
		if !b.set {
			return 0, false
		}
		return clampInt(b.v.Num()), true
	}
	l, hasL := toInt(lo)
	h, hasH := toInt(hi)
	// Non-negative numbers, then negative ones as -w with w in [-h, -l].
	pos := numberPart(l, hasL, lo.excl, h, hasH, hi.excl, false)
	neg := numberPart(-h, hasH, hi.excl, -l, hasL, lo.excl, true)
	if neg.op != opFail {
		neg = Seq(Byte('-'), neg)
	}
	return Alt(pos, neg), nil
}

// numberPart is the unsigned numbers I or I.F in [l, h] (each side
// optional, exclusive or not); positive leaves out zero.
func numberPart(l int64, hasL, lEx bool, h int64, hasH, hEx bool, positive bool) *Expr {
	if !hasL {
		l = -maxInt
	}
	if !hasH {
		h = maxInt
	}
	// A zero fraction: the value is I.
	zl, zh := l, h
	if hasL && lEx {
		zl++
	}
	if hasH && hEx {
		zh--
	}
	zl = max(zl, 0)
	if positive {
		zl = max(zl, 1)
	}
	// A non-zero fraction: the value is in (I, I+1).
	nl, nh := max(l, 0), h-1
	if !hasH {
		nh = maxInt
	}
	d := digit()
	zero := Seq(intRange(zl, zh), Opt(Seq(Byte('.'), Repeat(Byte('0'), 1, 16))))
	frac := Seq(intRange(nl, nh), Byte('.'), Repeat(d, 0, 15), Class(rng('1', '9')))
	return Alt(zero, frac)
}

// intRange matches the integers l..h written without leading zeros,
// and "-0" never.
func intRange(l, h int64) *Expr {
	l, h = max(l, -maxInt), min(h, maxInt)
	if l > h {
		return Fail()
	}
	var alts []*Expr
	if l < 0 {
		nl, nh := int64(1), -l
		if h < 0 {
			nl = -h
		}
		alts = append(alts, Seq(Byte('-'), uintRange(nl, nh)))
	}
	if h >= 0 {
		alts = append(alts, uintRange(max(l, 0), h))
	}
	return Alt(alts...)
}

// uintRange matches the integers l..h (0 <= l <= h) in decimal.
func uintRange(l, h int64) *Expr {
	ls, hs := strconv.FormatInt(l, 10), strconv.FormatInt(h, 10)
	var alts []*Expr
	for n := len(ls); n <= len(hs); n++ {
		lo, hi := ls, hs
		if n > len(ls) {
			lo = "1" + strings.Repeat("0", n-1)
		}
		if n < len(hs) {
			hi = strings.Repeat("9", n)
		}
		alts = append(alts, digitRange(lo, hi))
	}
	return Alt(alts...)
}

// digitRange matches the digit strings from lo to hi, of one length.
func digitRange(lo, hi string) *Expr {
	if lo == "" {
		return Empty()
	}
	if lo[0] == hi[0] {
		return Seq(Byte(lo[0]), digitRange(lo[1:], hi[1:]))
	}
	rest := len(lo) - 1
	if strings.Trim(lo[1:], "0") == "" && strings.Trim(hi[1:], "9") == "" {
		return Seq(Class(rng(lo[0], hi[0])), Repeat(digit(), rest, rest))
	}
	alts := []*Expr{Seq(Byte(lo[0]), digitRange(lo[1:], strings.Repeat("9", rest)))}
	if lo[0]+1 <= hi[0]-1 {
		alts = append(alts, Seq(Class(rng(lo[0]+1, hi[0]-1)), Repeat(digit(), rest, rest)))
	}
	alts = append(alts, Seq(Byte(hi[0]), digitRange(strings.Repeat("0", rest), hi[1:])))
	return Alt(alts...)
}

// ---- objects and arrays ----

func requiredSet(n *jnode, path string) (map[string]bool, error) {
	req := map[string]bool{}
	r := n.get("required")
	if r == nil {
		return req, nil
	}
	if r.kind != 'a' {
		return nil, schemaErr("required", path, "required must be an array of strings")
	}
	for _, v := range r.vals {
		if v.kind != 's' {
			return nil, schemaErr("required", path, "required must be an array of strings")
		}
		req[v.str] = true
	}
	return req, nil
}

func (c *conv) objectExpr(n *jnode, path string, depth int) (*Expr, error) {
	req, err := requiredSet(n, path)
	if err != nil {
		return nil, err
	}
	props := n.get("properties")
	if props != nil && props.kind != 'o' {
		return nil, schemaErr("properties", path, "properties must be an object")
	}
	ap := n.get("additionalProperties")
	if ap != nil && ap.kind != 'b' && ap.kind != 'o' {
		return nil, schemaErr("additionalProperties", path, "additionalProperties must be a schema")
	}
	nprops := 0
	if props != nil {
		nprops = len(props.keys)
	}
	minP, hasMin, err := c.intKeyword(n, "minProperties", path)
	if err != nil {
		return nil, err
	}
	maxP, hasMax, err := c.intKeyword(n, "maxProperties", path)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties"} {
		v := n.get(k)
		if v == nil || v.kind == 'o' && len(v.keys) == 0 || v.kind == 'b' && v.b {
			continue
		}
		return nil, unsupported(k, path)
	}
	if nprops == 0 {
		for name := range req {
			return nil, schemaErr("required", path, "required property %q is not in properties", name)
		}
		if ap != nil && ap.kind == 'b' && !ap.b {
			if hasMin && minP > 0 {
				return Fail(), nil
			}
			return Seq(Byte('{'), jsonWS(), Byte('}')), nil
		}
		if hasMin && minP > 1 {
			return nil, schemaErr("minProperties", path, "minProperties above 1 is not supported without properties")
		}
		var v *Expr
		if ap == nil {
			v = AnyJSON(c.lim.MaxAnyDepth - 1)
		} else {
			if v, err = c.value(ap, path+"/additionalProperties", depth+1); err != nil {
				return nil, err
			}
		}
		if !hasMax {
			maxP = -1
		}
		return jsonObjectOf(JSONString(), v, minP, maxP), nil
	}
	for _, name := range props.keys {
		delete(req, name)
	}
	for name := range req {
		return nil, schemaErr("required", path, "required property %q is not in properties", name)
	}
	req, _ = requiredSet(n, path)
	nreq := 0
	var ms []Member
	for i, name := range props.keys {
		v, err := c.value(props.vals[i], path+"/properties/"+escPointer(name), depth+1)
		if err != nil {
			return nil, err
		}
		if v.op == opFail {
			if req[name] {
				return Fail(), nil
			}
			continue
		}
		if req[name] {
			nreq++
		}
		ms = append(ms, Member{Seq(Lit(quote(name)), jsonWS(), Byte(':'), jsonWS(), v), req[name]})
	}
	if hasMin && minP > nreq {
		return nil, schemaErr("minProperties", path, "minProperties above the required properties is not supported")
	}
	if hasMax && maxP < len(ms) {
		return nil, schemaErr("maxProperties", path, "maxProperties below the number of properties is not supported")
	}
	return Seq(Byte('{'), jsonWS(), objectMembers(ms, jsonSep()), jsonWS(), Byte('}')), nil
}

// objectMembers is Members(sep, ms) with each member once in the
// automaton when one is required: the optional members before the first
// required one each come with the separator after them, those after it
// with the separator before. Members keeps two copies of each, so
// nested objects would cost a power of their depth.
func objectMembers(ms []Member, sep *Expr) *Expr {
	r := slices.IndexFunc(ms, func(m Member) bool { return m.Required })
	if r < 0 {
		return Members(sep, ms)
	}
	var xs []*Expr
	for _, m := range ms[:r] {
		xs = append(xs, Opt(Seq(m.X, sep)))
	}
	xs = append(xs, ms[r].X)
	for _, m := range ms[r+1:] {
		x := Seq(sep, m.X)
		if !m.Required {
			x = Opt(x)
		}
		xs = append(xs, x)
	}
	return Seq(xs...)
}

func (c *conv) arrayExpr(n *jnode, path string, depth int) (*Expr, error) {
	if u := n.get("uniqueItems"); u != nil && (u.kind != 'b' || u.b) {
		return nil, unsupported("uniqueItems", path)
	}
	for _, k := range []string{"contains", "minContains", "maxContains", "additionalItems", "unevaluatedItems"} {
		if n.get(k) != nil {
			return nil, unsupported(k, path)
		}
	}
	minI, _, err := c.intKeyword(n, "minItems", path)
	if err != nil {
		return nil, err
	}
	maxI, hasMax, err := c.intKeyword(n, "maxItems", path)
	if err != nil {
		return nil, err
	}
	if !hasMax {
		maxI = -1
	}
	if maxI >= 0 && minI > maxI {
		return Fail(), nil
	}
	if maxI > c.lim.MaxStates || minI > c.lim.MaxStates {
		return nil, &LimitError{What: "grammar states", Limit: c.lim.MaxStates}
	}
	var item *Expr
	if it := n.get("items"); it == nil {
		item = AnyJSON(c.lim.MaxAnyDepth - 1)
	} else {
		if it.kind == 'a' {
			return nil, schemaErr("items", path, "items as an array is not supported; use prefixItems")
		}
		if item, err = c.value(it, path+"/items", depth+1); err != nil {
			return nil, err
		}
	}
	pi := n.get("prefixItems")
	if pi == nil {
		return jsonArrayOf(item, minI, maxI), nil
	}
	if pi.kind != 'a' {
		return nil, schemaErr("prefixItems", path, "prefixItems must be an array")
	}
	var prefix []*Expr
	for i, p := range pi.vals {
		x, err := c.value(p, fmt.Sprintf("%s/prefixItems/%d", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		prefix = append(prefix, x)
	}
	if maxI >= 0 && len(prefix) > maxI {
		prefix = prefix[:maxI]
	}
	// The rest: items after the prefix.
	restMin, restMax := max0(minI-len(prefix)), -1
	if maxI >= 0 {
		restMax = maxI - len(prefix)
	}
	sep := jsonSep()
	var tail *Expr
	switch {
	case restMax == 0 || item.op == opFail:
		if restMin > 0 {
			return Fail(), nil
		}
		tail = Empty()
	default:
		tail = Seq(sep, List(item, sep, max1(restMin), restMax))
		if restMin == 0 {
			tail = Opt(tail)
		}
	}
	// Element i present: required when i < minItems.
	for i := len(prefix) - 1; i >= 0; i-- {
		x := prefix[i]
		if i > 0 {
			x = Seq(sep, x)
		}
		tail = Seq(x, tail)
		if i >= minI {
			tail = Opt(tail)
		}
	}
	if len(prefix) == 0 {
		return jsonArrayOf(item, minI, maxI), nil
	}
	return Seq(Byte('['), jsonWS(), tail, jsonWS(), Byte(']')), nil
}

// ---- size ----

// checkSize refuses an expression whose automaton would have more than
// MaxStates states, before building it.
func (c *conv) checkSize(x *Expr) error {
	memo := map[*Expr]int{}
	if exprSize(x, memo, c.lim.MaxStates) > c.lim.MaxStates {
		return &LimitError{What: "grammar states", Limit: c.lim.MaxStates}
	}
	return nil
}

// exprSize is the states x adds to an automaton, as nfa.build counts
// them, saturating past limit.
func exprSize(x *Expr, memo map[*Expr]int, limit int) int {
	if s, ok := memo[x]; ok {
		return s
	}
	sat := func(v int) int { return min(v, limit+1) }
	s := 0
	switch x.op {
	case opFail:
		s = 1
	case opLit:
		s = len(x.lit)
	case opClass:
		s = 1
	case opSeq:
		for _, y := range x.subs {
			s = sat(s + exprSize(y, memo, limit))
		}
	case opAlt:
		s = 1
		for _, y := range x.subs {
			s = sat(s + 1 + exprSize(y, memo, limit))
		}
	case opRepeat:
		item := 1 + exprSize(x.subs[0], memo, limit)
		s = sat(x.min * item)
		if x.max < 0 {
			s = sat(s + 1 + item)
		} else {
			s = sat(s + 1 + sat((x.max-x.min)*item))
		}
	case opList:
		s = sat(1 + exprSize(x.subs[0], memo, limit) + exprSize(x.subs[1], memo, limit))
	case opMembers:
		sep := exprSize(x.subs[0], memo, limit)
		for i, y := range x.subs[1:] {
			item := exprSize(y, memo, limit)
			s = sat(s + 3 + item)
			if i > 0 {
				s = sat(s + sep + 1 + item)
			}
		}
		s = sat(s + 1)
	}
	memo[x] = s
	return s
}
