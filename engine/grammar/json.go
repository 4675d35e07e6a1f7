package grammar

import "sync"

// JSON values as expressions.
//
// Whitespace between tokens is bounded: at most maxWS bytes of space,
// newline or tab at each place JSON allows whitespace, so a model cannot
// ramble whitespace forever (a document pretty-printed a few levels deep
// still fits). Numbers are bounded too: at most 16 integer digits, 16
// fraction digits and 3 exponent digits.

// maxWS is the most whitespace bytes allowed between two JSON tokens.
const maxWS = 12

// jsonWS is the whitespace allowed between JSON tokens.
func jsonWS() *Expr { return wsOnce() }

// Expressions are never changed once built, so the building blocks are
// built once and shared.
var (
	wsOnce = sync.OnceValue(func() *Expr {
		return Repeat(Class(Range{' ', ' '}, Range{'\n', '\n'}, Range{'\t', '\t'}), 0, maxWS)
	})
	charOnce  = sync.OnceValue(buildJSONChar)
	multiOnce = sync.OnceValue(buildUTF8Multi)
)

func rng(lo, hi byte) Range { return Range{lo, hi} }

// cont is a UTF-8 continuation byte.
func cont() *Expr { return Class(rng(0x80, 0xBF)) }

// utf8Multi is one valid UTF-8 sequence of two to four bytes: no
// overlong forms, no surrogates, nothing past U+10FFFF.
func utf8Multi() *Expr { return multiOnce() }

func buildUTF8Multi() *Expr {
	c := cont()
	two := Class(rng(0xC2, 0xDF))
	three := Alt(
		Seq(Byte(0xE0), Class(rng(0xA0, 0xBF))),
		Seq(Class(rng(0xE1, 0xEC), rng(0xEE, 0xEF)), c),
		Seq(Byte(0xED), Class(rng(0x80, 0x9F))),
	)
	four := Seq(Alt(
		Seq(Byte(0xF0), Class(rng(0x90, 0xBF))),
		Seq(Class(rng(0xF1, 0xF3)), c),
		Seq(Byte(0xF4), Class(rng(0x80, 0x8F))),
	), c)
	return Seq(Alt(two, three, four), c)
}

func hexDigit() *Expr { return Class(rng('0', '9'), rng('a', 'f'), rng('A', 'F')) }

// jsonEscape is one escape sequence of a JSON string; \u escapes of
// surrogates (D800-DFFF) are left out.
func jsonEscape() *Expr {
	h := hexDigit()
	u := Alt(
		Seq(Class(rng('0', '9'), rng('a', 'c'), rng('A', 'C'), rng('e', 'f'), rng('E', 'F')), h, h, h),
		Seq(Class(rng('d', 'd'), rng('D', 'D')), Class(rng('0', '7')), h, h),
	)
	return Seq(Byte('\\'), Alt(
		Class(rng('"', '"'), rng('\\', '\\'), rng('/', '/'), rng('b', 'b'), rng('f', 'f'), rng('n', 'n'), rng('r', 'r'), rng('t', 't')),
		Seq(Byte('u'), u),
	))
}

// jsonChar is one character of a JSON string's body: a printable ASCII
// byte other than '"' and '\', a UTF-8 sequence, or an escape.
func jsonChar() *Expr { return charOnce() }

func buildJSONChar() *Expr {
	return Alt(
		Class(rng(0x20, 0x21), rng(0x23, 0x5B), rng(0x5D, 0x7F)),
		utf8Multi(),
		jsonEscape(),
	)
}

// JSONString matches a JSON string: quotes around valid UTF-8 without
// control bytes, and the escapes JSON defines (no \u surrogates).
func JSONString() *Expr { return jsonStringLen(0, -1) }

// jsonStringLen matches a JSON string of min..max characters (max < 0:
// no bound), an escape or a UTF-8 sequence counting one. A bounded
// string costs max copies of a character in the automaton.
func jsonStringLen(min, max int) *Expr {
	return Seq(Byte('"'), Repeat(jsonChar(), min, max), Byte('"'))
}

// rawChar is one character of raw (unquoted, unescaped) text that may
// stand between XML tags: valid UTF-8 without control bytes other than
// tab and newline (a value may be code or span lines), and without '<'.
func rawChar() *Expr {
	return Alt(Class(rng('\t', '\n'), rng(0x20, 0x3B), rng(0x3D, 0x7F)), utf8Multi())
}

// rawStringLen matches raw text of min..max characters (max < 0: no
// bound); see rawChar.
func rawStringLen(min, max int) *Expr { return Repeat(rawChar(), min, max) }

func digit() *Expr { return Class(rng('0', '9')) }

// jsonUint is an integer without sign: 0 or up to 16 digits without a
// leading zero.
func jsonUint() *Expr {
	return Alt(Byte('0'), Seq(Class(rng('1', '9')), Repeat(digit(), 0, 15)))
}

// JSONInteger matches -?(0|[1-9][0-9]{0,15}).
func JSONInteger() *Expr { return Seq(Opt(Byte('-')), jsonUint()) }

// JSONNumber matches a JSON number: JSONInteger, an optional fraction
// of 1..16 digits and an optional exponent of 1..3 digits.
func JSONNumber() *Expr {
	return Seq(JSONInteger(),
		Opt(Seq(Byte('.'), Repeat(digit(), 1, 16))),
		Opt(Seq(Class(rng('e', 'e'), rng('E', 'E')), Opt(Class(rng('+', '+'), rng('-', '-'))), Repeat(digit(), 1, 3))))
}

func jsonScalar() *Expr {
	return Alt(JSONString(), JSONNumber(), Lit("true"), Lit("false"), Lit("null"))
}

// jsonSep is a comma with whitespace around it.
func jsonSep() *Expr { return Seq(jsonWS(), Byte(','), jsonWS()) }

// jsonObjectOf is an object with any keys and values v: `{` ws
// (member (ws , ws member)* ws)? `}`. A failing v leaves `{}` only.
func jsonObjectOf(key, v *Expr, min, max int) *Expr {
	if v.op == opFail || max == 0 {
		if min > 0 {
			return Fail()
		}
		return Seq(Byte('{'), jsonWS(), Byte('}'))
	}
	member := Seq(key, jsonWS(), Byte(':'), jsonWS(), v)
	return jsonContainer('{', '}', member, min, max)
}

// jsonArrayOf is an array of min..max items v (max < 0: no bound).
func jsonArrayOf(v *Expr, min, max int) *Expr {
	if v.op == opFail || max == 0 {
		if min > 0 {
			return Fail()
		}
		return Seq(Byte('['), jsonWS(), Byte(']'))
	}
	return jsonContainer('[', ']', v, min, max)
}

func jsonContainer(open, close byte, item *Expr, min, max int) *Expr {
	body := Seq(List(item, jsonSep(), max1(min), max), jsonWS())
	if min <= 0 {
		body = Seq(jsonWS(), Opt(body))
	} else {
		body = Seq(jsonWS(), body)
	}
	return Seq(Byte(open), body, Byte(close))
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// AnyJSON matches any JSON value nested at most depth levels: at depth
// 1 a scalar or an empty object or array, at depth d a scalar or a
// container of values of depth d-1. Depth 0 or less matches nothing.
// The automaton holds about 2^depth copies of the scalars.
func AnyJSON(depth int) *Expr {
	anyMu.Lock()
	defer anyMu.Unlock()
	prev := Fail()
	for d := 1; d <= depth; d++ {
		if d < len(anyCache) && anyCache[d] != nil {
			prev = anyCache[d]
			continue
		}
		prev = Alt(jsonScalar(), jsonObjectOf(JSONString(), prev, 0, -1), jsonArrayOf(prev, 0, -1))
		if d < len(anyCache) {
			anyCache[d] = prev
		}
	}
	return prev
}

// anyCache holds AnyJSON by depth: expressions are never changed, so
// every grammar may share them.
var (
	anyMu    sync.Mutex
	anyCache [16]*Expr
)

// AnyJSONObject matches a JSON object whose values are AnyJSON(depth-1):
// what a json_object response format allows.
func AnyJSONObject(depth int) *Expr {
	if depth <= 0 {
		return Fail()
	}
	return jsonObjectOf(JSONString(), AnyJSON(depth-1), 0, -1)
}
