package grammar

import (
	"bytes"
	"fmt"
	"strings"
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
