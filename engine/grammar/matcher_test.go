package grammar

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// testVocab is a byte-level vocabulary: every byte, plus multi-byte
// pieces, plus a stop token (id 0) and a control token (id 1).
func testVocab(extra ...string) *Vocab {
	pieces := []string{"", ""}
	for c := range 256 {
		pieces = append(pieces, string(rune(c)))
	}
	for i := 2; i < 2+256; i++ {
		pieces[i] = string([]byte{byte(i - 2)})
	}
	pieces = append(pieces, extra...)
	return NewVocab(len(pieces), func(id int) string { return pieces[id] }, []int{0})
}

func allowed(m *Matcher, v *Vocab, remaining int) []int {
	logits := make([]float32, v.Size())
	m.Mask(logits, remaining)
	var out []int
	for i, l := range logits {
		if !math.IsInf(float64(l), -1) {
			out = append(out, i)
		}
	}
	return out
}

func TestVocabTrie(t *testing.T) {
	v := testVocab("ab", "abc", "ab", "b")
	// Every token reaches its node: walking an any-bytes grammar allows all
	// but the control token.
	g, err := Compile(v, Star(Class(Range{0, 255})), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := allowed(g.NewMatcher(), v, 100)
	if len(got) != v.Size()-1 || got[0] != 0 || got[1] != 2 {
		t.Fatalf("allowed %d tokens, first %v; want all but the control token", len(got), got[:3])
	}
}

func TestMaskFollowsGrammar(t *testing.T) {
	v := testVocab(`{"`, `a"`, `":`, `"}`, `{"a":1}`, `11`, `1}`)
	x := Seq(Lit(`{"a":`), Repeat(Class(Range{'0', '9'}), 1, -1), Lit("}"))
	g, err := Compile(v, x, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	m := g.NewMatcher()
	names := func(ids []int) []string {
		var s []string
		for _, id := range ids {
			s = append(s, v.Piece(id))
		}
		return s
	}
	if got := names(allowed(m, v, 100)); strings.Join(got, " ") != `{ {" {"a":1}` {
		t.Fatalf("first tokens %q", got)
	}
	for _, p := range []string{`{"`, "a", `":`, "1", "11"} {
		id := idOf(t, v, p)
		if err := m.Accept(id); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(allowed(m, v, 100)); strings.Join(got, " ") != "0 1 2 3 4 5 6 7 8 9 } 11 1}" {
		t.Fatalf("after digits %q", got)
	}
	if err := m.Accept(idOf(t, v, "a")); err == nil {
		t.Fatal("a token the grammar refuses was accepted")
	}
	if err := m.Accept(0); err == nil {
		t.Fatal("stop accepted in an incomplete document")
	}
	if err := m.Accept(idOf(t, v, "}")); err != nil || !m.Done() {
		t.Fatalf("closing: %v done %v", err, m.Done())
	}
	if got := allowed(m, v, 100); len(got) != 1 || got[0] != 0 {
		t.Fatalf("after the end %v, want only the stop token", got)
	}
}

func idOf(t testing.TB, v *Vocab, p string) int {
	for id := range v.Size() {
		if v.Piece(id) == p {
			return id
		}
	}
	t.Fatalf("no token %q", p)
	return -1
}

// TestAlwaysCloses samples random tokens under a budget: every output
// is a complete document, and one that the budget forced is no longer
// than the budget.
func TestAlwaysCloses(t *testing.T) {
	v := testVocab(`{"`, `":`, `",`, `"}`, `"a`, `aaaa`, `[[`, `]]`, `,[`)
	str := Seq(Lit(`"`), Star(Class(Range{'a', 'z'})), Lit(`"`))
	val := str
	for range 4 {
		val = Alt(str, Seq(Lit("["), List(val, Lit(","), 0, -1), Lit("]")))
	}
	x := Seq(Lit(`{"k":`), val, Lit(`,"z":`), str, Lit("}"))
	g, err := Compile(v, x, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	min := g.MinBytes()
	g.mu.Lock()
	least := int(g.closeTokens(g.starts[0]))
	g.mu.Unlock()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		budget := min/2 + rng.IntN(40)
		m := g.NewMatcher()
		var out strings.Builder
		stopped := false
		for left := budget; left > 0 && !stopped; left-- {
			ok := allowed(m, v, left)
			if len(ok) == 0 {
				t.Fatalf("trial %d: nothing allowed after %q", trial, out.String())
			}
			id := ok[rng.IntN(len(ok))]
			if err := m.Accept(id); err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if id == 0 {
				stopped = true
			}
			out.WriteString(v.Piece(id))
		}
		if budget >= least && !g.MatchString(out.String()) {
			t.Fatalf("trial %d (budget %d): %q is not a complete document", trial, budget, out.String())
		}
		if m.Truncated() != (budget < least) {
			t.Fatalf("trial %d: truncated %v with a budget of %d, the bound %d", trial, m.Truncated(), budget, least)
		}
	}
	if least >= min || least < 4 {
		t.Fatalf("the token bound %d is not below the byte bound %d", least, min)
	}
	m := g.NewMatcher()
	allowed(m, v, least-1)
	if !m.Truncated() {
		t.Error("a budget below the shortest document is not reported")
	}
}

func TestLazy(t *testing.T) {
	v := testVocab("<tool", "_call>", "<tool_call>{", "}</tool_call>", "hello")
	after := Seq(Lit(`{"n":`), Repeat(Class(Range{'0', '9'}), 1, 3), Lit("}</tool_call>"))
	for _, once := range []bool{false, true} {
		g, err := CompileLazy(v, Lazy{Triggers: []string{"<tool_call>"}, After: []*Expr{after}, Once: once}, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		m := g.NewMatcher()
		if n := len(allowed(m, v, 50)); n != v.Size() {
			t.Fatalf("free text: %d allowed", n)
		}
		for _, p := range []string{"hello", "<tool", "_call>"} {
			if err := m.Accept(idOf(t, v, p)); err != nil {
				t.Fatal(err)
			}
		}
		if !m.Active() {
			t.Fatal("the trigger across two tokens did not start the part")
		}
		if got := allowed(m, v, 50); len(got) != 1 || v.Piece(got[0]) != "{" {
			t.Fatalf("after the trigger: %v", got)
		}
		for _, p := range []string{"{", `"`, "n", `"`, ":", "7", "}</tool_call>"} {
			if err := m.Accept(idOf(t, v, p)); err != nil {
				t.Fatal(err)
			}
		}
		if !m.Done() || m.Active() {
			t.Fatal("the part did not end")
		}
		n := len(allowed(m, v, 50))
		if once && n != 1 || !once && n != v.Size() {
			t.Fatalf("once=%v: %d allowed after the part", once, n)
		}
	}
	// A token that runs past the trigger feeds the part.
	g, _ := CompileLazy(v, Lazy{Triggers: []string{"<tool_call>"}, After: []*Expr{after}}, DefaultLimits())
	m := g.NewMatcher()
	if err := m.Accept(idOf(t, v, "<tool_call>{")); err != nil || !m.Active() {
		t.Fatalf("%v active %v", err, m.Active())
	}
	if got := allowed(m, v, 50); len(got) != 1 || v.Piece(got[0]) != `"` {
		t.Fatalf("after a trigger token with a brace: %v", got)
	}
}
