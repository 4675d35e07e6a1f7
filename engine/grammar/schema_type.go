package grammar

import "slices"

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
