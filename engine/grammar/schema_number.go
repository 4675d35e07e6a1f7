package grammar

import (
	"math/big"
	"strconv"
	"strings"
)

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
