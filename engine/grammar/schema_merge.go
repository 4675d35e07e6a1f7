package grammar

import (
	"fmt"
	"math/big"
	"slices"
)

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
