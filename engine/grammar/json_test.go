package grammar

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestJSONValues(t *testing.T) {
	cases := []struct {
		name string
		x    *Expr
		yes  []string
		no   []string
	}{
		{"string", JSONString(),
			[]string{`""`, `"abc"`, `"a\"b"`, `"\\\/\b\f\n\r\t"`, `"\u00e9\uABCD\uFFFF"`, `"é"`, `"€"`, `"𝄞"`, "\"\x7f\"", "\"\xed\x9f\xbf\"", "\"\xf4\x8f\xbf\xbf\""},
			[]string{`"`, `"a`, `"\"`, `"\x"`, `"\ud800"`, `"\uDFFF"`, `"\u12"`, "\"\x01\"", "\"\n\"", "\"\xc0\x80\"", "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"", "\"\x80\"", `"a"b"`}},
		{"string len", jsonStringLen(2, 3),
			[]string{`"ab"`, `"abc"`, `"\n\u0041"`, `"éé"`, `"𝄞\t𝄞"`},
			[]string{`""`, `"a"`, `"abcd"`, `"é"`, `"\n"`, `"ab\tc"`}},
		{"integer", JSONInteger(),
			[]string{"0", "-0", "7", "-12", "1234567890123456"},
			[]string{"", "-", "01", "+1", "1.0", "12345678901234567", "1e3"}},
		{"number", JSONNumber(),
			[]string{"0", "-1.5", "3.14", "1e10", "1E-3", "2.5e+123", "0.0000000000000001"},
			[]string{".5", "1.", "1e", "1e1234", "--1", "0x1", "1.00000000000000001"}},
		{"any 1", AnyJSON(1),
			[]string{"null", "true", "false", "1", `"x"`, "{}", "[]", "{ }", "[\n]"},
			[]string{"[1]", `{"a":1}`, "nul", ""}},
		{"any 3", AnyJSON(3),
			[]string{`[1, [2, []], {"a": {}}]`, `{"a": [true, null], "b": {"c": "d"}}`, "[\n  1,\n  2\n]"},
			[]string{`[[[1]]]`, `[1,]`, `{"a"}`, `{a:1}`, `[1 2]`, "[" + strings.Repeat(" ", 13) + "1]"}},
		{"object", AnyJSONObject(2),
			[]string{`{}`, `{"a": 1, "b": [], "c": {}}`},
			[]string{`[]`, `1`, `{"a": [1]}`, `{"a": 1,}`}},
	}
	for _, c := range cases {
		g := mustCompile(t, c.x)
		for _, s := range c.yes {
			if !g.MatchString(s) {
				t.Errorf("%s: %q should match", c.name, s)
			}
		}
		for _, s := range c.no {
			if g.MatchString(s) {
				t.Errorf("%s: %q should not match", c.name, s)
			}
		}
	}
}

// TestAnyJSONSize pins the automaton's size for untyped values: about
// 21,500 states at the default depth 6.
func TestAnyJSONSize(t *testing.T) {
	g := mustCompile(t, AnyJSON(DefaultLimits().MaxAnyDepth))
	if n := int(g.d.n.size); n > 25_000 {
		t.Errorf("AnyJSON(%d): %d states, want at most 25000", DefaultLimits().MaxAnyDepth, n)
	}
	if n := exprSize(AnyJSON(6), map[*Expr]int{}, 1<<30); n+1 < int(g.d.n.size)-2 || n > int(g.d.n.size) {
		t.Errorf("exprSize = %d, automaton %d states", n, int(g.d.n.size))
	}
}

// randomDoc walks g at random: bytes the grammar allows, then the
// shortest way to close the document.
func randomDoc(g *Grammar, r *rand.Rand, maxLen int) string {
	var b []byte
	for len(b) < maxLen {
		if g.MatchString(string(b)) && r.IntN(4) == 0 {
			return string(b)
		}
		var next []byte
		for c := 0; c < 256; c++ {
			if g.Prefix(string(append(b, byte(c)))) {
				next = append(next, byte(c))
			}
		}
		if len(next) == 0 {
			break
		}
		b = append(b, next[r.IntN(len(next))])
	}
	return string(b) + g.Shortest(string(b))
}

func TestAnyJSONRandomValid(t *testing.T) {
	g := mustCompile(t, AnyJSON(4))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		doc := randomDoc(g, r, 60)
		if !g.MatchString(doc) {
			t.Fatalf("walk produced %q, which does not match", doc)
		}
		if !json.Valid([]byte(doc)) {
			t.Fatalf("walk produced invalid JSON %q", doc)
		}
	}
}
