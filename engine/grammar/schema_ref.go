package grammar

import (
	"net/url"
	"strconv"
	"strings"
)

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
