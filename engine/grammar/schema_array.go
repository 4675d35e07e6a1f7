package grammar

import "fmt"

func (c *conv) arrayExpr(n *jnode, path string, depth int) (*Expr, error) {
	if err := unsupportedArrayKeywords(n, path); err != nil {
		return nil, err
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
	item, err := c.itemsExpr(n, path, depth)
	if err != nil {
		return nil, err
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
	return prefixArray(prefix, item, minI, maxI), nil
}

// unsupportedArrayKeywords refuses the array keywords not supported.
func unsupportedArrayKeywords(n *jnode, path string) error {
	if u := n.get("uniqueItems"); u != nil && (u.kind != 'b' || u.b) {
		return unsupported("uniqueItems", path)
	}
	for _, k := range []string{"contains", "minContains", "maxContains", "additionalItems", "unevaluatedItems"} {
		if n.get(k) != nil {
			return unsupported(k, path)
		}
	}
	return nil
}

// itemsExpr is the expression for each item per items: any JSON value
// when there is none.
func (c *conv) itemsExpr(n *jnode, path string, depth int) (*Expr, error) {
	it := n.get("items")
	if it == nil {
		return AnyJSON(c.lim.MaxAnyDepth - 1), nil
	}
	if it.kind == 'a' {
		return nil, schemaErr("items", path, "items as an array is not supported; use prefixItems")
	}
	return c.value(it, path+"/items", depth+1)
}

// prefixArray is the array of the prefix items then items, minI to maxI
// elements in all (maxI -1: no bound).
func prefixArray(prefix []*Expr, item *Expr, minI, maxI int) *Expr {
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
			return Fail()
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
		return jsonArrayOf(item, minI, maxI)
	}
	return Seq(Byte('['), jsonWS(), tail, jsonWS(), Byte(']'))
}
