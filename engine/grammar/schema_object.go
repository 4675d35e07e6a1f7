package grammar

import "slices"

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

// propCounts is minProperties and maxProperties as read, each with
// whether the schema sets it.
type propCounts struct {
	min, max       int
	hasMin, hasMax bool
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
	cnt, err := c.propCounts(n, path)
	if err != nil {
		return nil, err
	}
	if err := unsupportedObjectKeywords(n, path); err != nil {
		return nil, err
	}
	if nprops == 0 {
		return c.openObject(req, ap, cnt, path, depth)
	}
	return c.listedObject(n, props, req, cnt, path, depth)
}

// propCounts reads minProperties and maxProperties.
func (c *conv) propCounts(n *jnode, path string) (propCounts, error) {
	var cnt propCounts
	var err error
	if cnt.min, cnt.hasMin, err = c.intKeyword(n, "minProperties", path); err != nil {
		return cnt, err
	}
	if cnt.max, cnt.hasMax, err = c.intKeyword(n, "maxProperties", path); err != nil {
		return cnt, err
	}
	return cnt, nil
}

// unsupportedObjectKeywords refuses the object keywords not supported,
// unless they allow everything.
func unsupportedObjectKeywords(n *jnode, path string) error {
	for _, k := range []string{"patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties"} {
		v := n.get(k)
		if v == nil || v.kind == 'o' && len(v.keys) == 0 || v.kind == 'b' && v.b {
			continue
		}
		return unsupported(k, path)
	}
	return nil
}

// openObject is an object schema without properties: any keys, with
// values per additionalProperties (ap, possibly nil).
func (c *conv) openObject(req map[string]bool, ap *jnode, cnt propCounts, path string, depth int) (*Expr, error) {
	for name := range req {
		return nil, schemaErr("required", path, "required property %q is not in properties", name)
	}
	if ap != nil && ap.kind == 'b' && !ap.b {
		if cnt.hasMin && cnt.min > 0 {
			return Fail(), nil
		}
		return Seq(Byte('{'), jsonWS(), Byte('}')), nil
	}
	if cnt.hasMin && cnt.min > 1 {
		return nil, schemaErr("minProperties", path, "minProperties above 1 is not supported without properties")
	}
	var v *Expr
	if ap == nil {
		v = AnyJSON(c.lim.MaxAnyDepth - 1)
	} else {
		var err error
		if v, err = c.value(ap, path+"/additionalProperties", depth+1); err != nil {
			return nil, err
		}
	}
	maxP := cnt.max
	if !cnt.hasMax {
		maxP = -1
	}
	return jsonObjectOf(JSONString(), v, cnt.min, maxP), nil
}

// listedObject is an object schema with properties: the listed ones
// only, in order. req is the required set, which it consumes.
func (c *conv) listedObject(n, props *jnode, req map[string]bool, cnt propCounts, path string, depth int) (*Expr, error) {
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
	if cnt.hasMin && cnt.min > nreq {
		return nil, schemaErr("minProperties", path, "minProperties above the required properties is not supported")
	}
	if cnt.hasMax && cnt.max < len(ms) {
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
