package grammar

import (
	"slices"
	"sort"
)

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
