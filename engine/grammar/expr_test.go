package grammar

import "testing"

func mustCompile(t testing.TB, x *Expr) *Grammar {
	t.Helper()
	g, err := Compile(nil, x, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestExprMatch(t *testing.T) {
	digit := Class(Range{'0', '9'})
	cases := []struct {
		name string
		x    *Expr
		yes  []string
		no   []string
	}{
		{"lit", Lit("abc"), []string{"abc"}, []string{"", "ab", "abcd", "abd"}},
		{"alt", Alt(Lit("a"), Lit("bc"), Empty()), []string{"a", "bc", ""}, []string{"b", "abc"}},
		{"repeat", Repeat(digit, 2, 4), []string{"12", "123", "1234"}, []string{"1", "12345", "1a"}},
		{"star", Seq(Lit("["), Star(digit), Lit("]")), []string{"[]", "[1]", "[123456]"}, []string{"[", "[a]"}},
		{"list", Seq(Lit("["), List(digit, Lit(","), 0, 3), Lit("]")), []string{"[]", "[1]", "[1,2,3]"}, []string{"[1,2,3,4]", "[1,]", "[,1]"}},
		{"list min", List(digit, Lit(","), 2, -1), []string{"1,2", "1,2,3,4,5"}, []string{"1", ""}},
		{"fail", Alt(Fail(), Lit("x")), []string{"x"}, []string{""}},
		{"seq fail", Seq(Lit("x"), Fail()), nil, []string{"x", ""}},
		{"nested loops", Star(Alt(Star(Lit("a")), Lit("b"))), []string{"", "a", "ab", "bbaab"}, []string{"c"}},
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

func TestShortest(t *testing.T) {
	g := mustCompile(t, Seq(Lit(`{"a":`), Alt(Lit(`"xyz"`), Lit("1")), Lit("}")))
	if got := g.MinBytes(); got != 7 {
		t.Errorf("MinBytes = %d, want 7", got)
	}
	if got := g.Shortest(`{"a":"x`); got != `yz"}` {
		t.Errorf("Shortest = %q", got)
	}
	if !g.Prefix(`{"a":"`) || g.Prefix(`{"b`) {
		t.Error("Prefix wrong")
	}
}

func TestStateLimit(t *testing.T) {
	_, err := Compile(nil, Repeat(Lit("abcdefgh"), 0, 100000), DefaultLimits())
	if _, ok := err.(*LimitError); !ok {
		t.Fatalf("err = %v, want a LimitError", err)
	}
}

func TestMembers(t *testing.T) {
	m := func(s string, req bool) Member { return Member{Lit(s), req} }
	g := mustCompile(t, Seq(Lit("{"), Members(Lit(","), []Member{m("a", false), m("b", true), m("c", false)}), Lit("}")))
	for _, s := range []string{"{b}", "{a,b}", "{b,c}", "{a,b,c}"} {
		if !g.MatchString(s) {
			t.Errorf("%q should match", s)
		}
	}
	for _, s := range []string{"{}", "{a}", "{c}", "{a,c}", "{,b}", "{b,}", "{b,a}", "{a,,b}", "{ab}"} {
		if g.MatchString(s) {
			t.Errorf("%q should not match", s)
		}
	}
	opt := mustCompile(t, Seq(Lit("{"), Members(Lit(","), []Member{m("a", false), m("b", false)}), Lit("}")))
	for _, s := range []string{"{}", "{a}", "{b}", "{a,b}"} {
		if !opt.MatchString(s) {
			t.Errorf("optional: %q should match", s)
		}
	}
	if opt.MatchString("{,}") || opt.MatchString("{b,a}") {
		t.Error("optional: a bad list matched")
	}
}

func TestListOneCopy(t *testing.T) {
	// A list nested 12 deep stays small because its item appears once.
	x := Lit("0")
	for range 12 {
		x = Alt(Lit("0"), Seq(Lit("["), List(x, Lit(","), 0, -1), Lit("]")))
	}
	g := mustCompile(t, x)
	if !g.MatchString("[0,[0,[]],0]") || g.MatchString("[0,]") {
		t.Error("nested list matched wrongly")
	}
	if n := int(g.d.n.size); n > 2000 {
		t.Errorf("%d states for a 12-deep list", n)
	}
}
