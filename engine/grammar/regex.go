package grammar

import (
	"errors"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// A JSON Schema pattern as an expression over a JSON string's body.
//
// The pattern matches the string's decoded content. The expression
// writes characters unescaped, except '"', '\' and the controls \n, \r,
// \t where the pattern names them, which it writes as JSON escapes; it
// never writes other escapes (a subset of the strings the pattern
// allows). An unanchored pattern means "contains": any characters may
// stand around it. ^ and $ may stand only at the pattern's ends (of the
// pattern or of a top-level alternative); word boundaries are refused.

// patternExpr compiles pattern to the body of a JSON string.
func patternExpr(pattern, path string, lim Limits) (*Expr, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) && (se.Code == syntax.ErrInvalidRepeatSize || se.Code == syntax.ErrLarge || se.Code == syntax.ErrNestingDepth) {
			return nil, &LimitError{What: "pattern repetitions", Limit: 1000}
		}
		return nil, schemaErr("pattern", path, "bad pattern: %v", err)
	}
	r := &rx{path: path}
	x, err := r.conv(re, true, true, 0)
	if err != nil {
		return nil, err
	}
	c := &conv{lim: lim}
	if err := c.checkSize(x); err != nil {
		return nil, err
	}
	return x, nil
}

type rx struct{ path string }

// patChar is any character written unescaped in a JSON string.
func patChar() *Expr {
	return Alt(Class(rng(0x20, 0x21), rng(0x23, 0x5B), rng(0x5D, 0x7F)), utf8Multi())
}

// conv converts re; padL and padR say that re stands at the pattern's
// start or end, where unless anchored any text may come before or after.
func (r *rx) conv(re *syntax.Regexp, padL, padR bool, depth int) (*Expr, error) {
	if depth > 200 {
		return nil, &LimitError{What: "pattern nesting levels", Limit: 200}
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return Fail(), nil
	case syntax.OpEmptyMatch:
		if padL || padR {
			return Star(patChar()), nil
		}
		return Empty(), nil
	case syntax.OpBeginText, syntax.OpBeginLine:
		if !padL {
			return nil, schemaErr("pattern", r.path, "^ is supported only at the start of the pattern")
		}
		return pad(Empty(), false, padR), nil
	case syntax.OpEndText, syntax.OpEndLine:
		if !padR {
			return nil, schemaErr("pattern", r.path, "$ is supported only at the end of the pattern")
		}
		return pad(Empty(), padL, false), nil
	case syntax.OpLiteral:
		return pad(literal(re), padL, padR), nil
	case syntax.OpCharClass:
		return pad(classExpr(re.Rune), padL, padR), nil
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return pad(patChar(), padL, padR), nil
	case syntax.OpCapture:
		return r.conv(re.Sub[0], padL, padR, depth+1)
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return r.conv(&syntax.Regexp{Op: syntax.OpEmptyMatch}, padL, padR, depth)
		}
		xs, err := r.convSubs(re.Sub, padL, padR, true, depth)
		return Seq(xs...), err
	case syntax.OpAlternate:
		xs, err := r.convSubs(re.Sub, padL, padR, false, depth)
		return Alt(xs...), err
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return r.convRepeat(re, padL, padR, depth)
	}
	return nil, schemaErr("pattern", r.path, "the pattern operator %v is not supported", re.Op)
}

// pad lets any text come before x (padL) and after it (padR).
func pad(x *Expr, padL, padR bool) *Expr {
	if padL {
		x = Seq(Star(patChar()), x)
	}
	if padR {
		x = Seq(x, Star(patChar()))
	}
	return x
}

// literal is re's runes in order, each with its case folds where re
// folds case.
func literal(re *syntax.Regexp) *Expr {
	var xs []*Expr
	for _, c := range re.Rune {
		if re.Flags&syntax.FoldCase == 0 {
			xs = append(xs, runeLit(c))
			continue
		}
		var alts []*Expr
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			alts = append(alts, runeLit(f))
		}
		xs = append(xs, Alt(append(alts, runeLit(c))...))
	}
	return Seq(xs...)
}

// convSubs converts the operands of a concatenation (seq: only the first
// stands at the start and only the last at the end) or an alternation
// (each stands where the whole does).
func (r *rx) convSubs(subs []*syntax.Regexp, padL, padR, seq bool, depth int) ([]*Expr, error) {
	xs := make([]*Expr, 0, len(subs))
	for i, s := range subs {
		l, r2 := padL, padR
		if seq {
			l, r2 = padL && i == 0, padR && i == len(subs)-1
		}
		x, err := r.conv(s, l, r2, depth+1)
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	return xs, nil
}

// convRepeat converts a repetition; its operand stands at neither end.
func (r *rx) convRepeat(re *syntax.Regexp, padL, padR bool, depth int) (*Expr, error) {
	x, err := r.conv(re.Sub[0], false, false, depth+1)
	if err != nil {
		return nil, err
	}
	lo, hi := re.Min, re.Max
	switch re.Op {
	case syntax.OpStar:
		lo, hi = 0, -1
	case syntax.OpPlus:
		lo, hi = 1, -1
	case syntax.OpQuest:
		lo, hi = 0, 1
	}
	return pad(Repeat(x, lo, hi), padL, padR), nil
}

// runeLit is the rune as it is written in a JSON string.
func runeLit(c rune) *Expr {
	switch c {
	case '"':
		return Lit(`\"`)
	case '\\':
		return Lit(`\\`)
	case '\n':
		return Lit(`\n`)
	case '\r':
		return Lit(`\r`)
	case '\t':
		return Lit(`\t`)
	}
	if c < 0x20 || c >= 0xD800 && c <= 0xDFFF || c > unicode.MaxRune {
		return Fail()
	}
	return Lit(string(c))
}

// classExpr matches the runes of the ranges (pairs lo, hi).
func classExpr(ranges []rune) *Expr {
	var alts []*Expr
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for _, c := range []rune{'"', '\\', '\n', '\r', '\t'} {
			if lo <= c && c <= hi {
				alts = append(alts, runeLit(c))
			}
		}
		// Unescaped: 0x20-0x21, 0x23-0x5B, 0x5D and up.
		for _, a := range [][2]rune{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, unicode.MaxRune}} {
			l, h := max(lo, a[0]), min(hi, a[1])
			utf8Seqs(l, h, &alts)
		}
	}
	return Alt(alts...)
}

// utf8Seqs appends the byte sequences that encode the runes lo..hi
// (surrogates left out), each a sequence of byte classes.
func utf8Seqs(lo, hi rune, out *[]*Expr) {
	if lo > hi {
		return
	}
	if lo <= 0xDFFF && hi >= 0xD800 {
		if lo < 0xD800 {
			utf8Seqs(lo, 0xD7FF, out)
		}
		if hi > 0xDFFF {
			utf8Seqs(0xE000, hi, out)
		}
		return
	}
	for _, b := range []rune{0x7F, 0x7FF, 0xFFFF} {
		if lo <= b && hi > b {
			utf8Seqs(lo, b, out)
			utf8Seqs(b+1, hi, out)
			return
		}
	}
	if hi < 0x80 {
		*out = append(*out, Class(rng(byte(lo), byte(hi))))
		return
	}
	for i := 1; i < 4; i++ {
		m := rune(1)<<(6*i) - 1
		if lo&^m != hi&^m {
			if lo&m != 0 {
				utf8Seqs(lo, lo|m, out)
				utf8Seqs((lo|m)+1, hi, out)
				return
			}
			if hi&m != m {
				utf8Seqs(lo, (hi&^m)-1, out)
				utf8Seqs(hi&^m, hi, out)
				return
			}
		}
	}
	a, b := utf8.AppendRune(nil, lo), utf8.AppendRune(nil, hi)
	var seq []*Expr
	for k := range a {
		seq = append(seq, Class(rng(a[k], b[k])))
	}
	*out = append(*out, Seq(seq...))
}
