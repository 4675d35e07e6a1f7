package grammar

// Expr is an expression of a grammar over bytes. Expressions are values
// built by the functions below and may be shared between parents: a
// compiled grammar expands them, and Limits bound what expansion costs.
type Expr struct {
	op   op
	lit  string
	rng  []Range
	subs []*Expr
	min  int
	max  int    // Repeat: -1 for no bound
	req  []bool // Members: which of subs are required
}

type op uint8

const (
	opEmpty op = iota
	opFail
	opLit
	opClass
	opSeq
	opAlt
	opRepeat
	opList
	opMembers
)

// Range is the bytes Lo..Hi, both included.
type Range struct{ Lo, Hi byte }

// Empty matches the empty string.
func Empty() *Expr { return &Expr{op: opEmpty} }

// Fail matches nothing: an alternative that cannot be taken.
func Fail() *Expr { return &Expr{op: opFail} }

// Lit matches s exactly.
func Lit(s string) *Expr {
	if s == "" {
		return Empty()
	}
	return &Expr{op: opLit, lit: s}
}

// Class matches one byte in any of the ranges.
func Class(rs ...Range) *Expr {
	if len(rs) == 0 {
		return Fail()
	}
	return &Expr{op: opClass, rng: rs}
}

// Byte matches the byte c.
func Byte(c byte) *Expr { return Class(Range{c, c}) }

// Seq matches its expressions one after another.
func Seq(xs ...*Expr) *Expr {
	var out []*Expr
	for _, x := range xs {
		switch x.op {
		case opEmpty:
			continue
		case opFail:
			return Fail()
		case opSeq:
			out = append(out, x.subs...)
			continue
		}
		out = append(out, x)
	}
	switch len(out) {
	case 0:
		return Empty()
	case 1:
		return out[0]
	}
	return &Expr{op: opSeq, subs: out}
}

// Alt matches any one of its expressions.
func Alt(xs ...*Expr) *Expr {
	var out []*Expr
	for _, x := range xs {
		switch x.op {
		case opFail:
			continue
		case opAlt:
			out = append(out, x.subs...)
			continue
		}
		out = append(out, x)
	}
	switch len(out) {
	case 0:
		return Fail()
	case 1:
		return out[0]
	}
	return &Expr{op: opAlt, subs: out}
}

// Opt matches x or nothing.
func Opt(x *Expr) *Expr { return Repeat(x, 0, 1) }

// Star matches x any number of times.
func Star(x *Expr) *Expr { return Repeat(x, 0, -1) }

// Repeat matches x at least min and at most max times; max < 0 means
// no bound.
func Repeat(x *Expr, min, max int) *Expr {
	if min < 0 {
		min = 0
	}
	if max >= 0 && max < min {
		return Fail()
	}
	if max == 0 || x.op == opEmpty {
		return Empty()
	}
	if x.op == opFail {
		if min == 0 {
			return Empty()
		}
		return Fail()
	}
	if min == 1 && max == 1 {
		return x
	}
	return &Expr{op: opRepeat, subs: []*Expr{x}, min: min, max: max}
}

// List matches item, then any number (from min-1 to max-1, max < 0 for
// no bound) of sep item: a separated list of min..max items. When the
// list has no bound and min <= 1, item appears once in the automaton, so
// nested lists cost their depth, not a power of it.
func List(item, sep *Expr, min, max int) *Expr {
	if max == 0 || item.op == opFail && min == 0 {
		return Empty()
	}
	if max < 0 && min <= 1 {
		l := &Expr{op: opList, subs: []*Expr{item, sep}}
		if min == 0 {
			return Opt(l)
		}
		return l
	}
	more := -1
	if max > 0 {
		more = max - 1
	}
	list := Seq(item, Repeat(Seq(sep, item), max0(min-1), more))
	if min == 0 {
		return Opt(list)
	}
	return list
}

// Member is one item of Members.
type Member struct {
	X        *Expr
	Required bool
}

// Members matches the members in order, each required one present and
// each optional one present or not, with sep between those present: the
// properties of a JSON object. Each member appears twice in the
// automaton (as the first present and after a separator), however many
// are optional.
func Members(sep *Expr, ms []Member) *Expr {
	if len(ms) == 0 {
		return Empty()
	}
	x := &Expr{op: opMembers, subs: []*Expr{sep}}
	for _, m := range ms {
		x.subs = append(x.subs, m.X)
		x.req = append(x.req, m.Required)
	}
	return x
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}
