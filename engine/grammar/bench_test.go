package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// benchVocab is a synthetic byte-level vocabulary of n tokens shaped like
// a modern BPE one (Qwen's is 151,665): every byte, then words with and
// without a leading space, capitalised, digits, punctuation runs, JSON
// and code fragments, runs of spaces and CJK characters.
func benchVocab(n int) *Vocab {
	rng := rand.New(rand.NewPCG(7, 11))
	seen := map[string]bool{}
	pieces := []string{""} // 0: the stop token
	add := func(s string) {
		if s != "" && !seen[s] && len(pieces) < n {
			seen[s] = true
			pieces = append(pieces, s)
		}
	}
	for c := range 256 {
		add(string([]byte{byte(c)}))
	}
	for _, s := range []string{`{"`, `":`, `",`, `"}`, `":"`, `","`, `"},`, `{"name`, `": "`, `", "`, `[{"`, `}]`, `"]`, `["`, "true", "false", "null", "\n", "\n\n", "  ", "    ", "\t"} {
		add(s)
	}
	letters := "etaoinshrdlcumwfgypbvkjxqz"
	word := func() string {
		var b strings.Builder
		for range 2 + rng.IntN(9) {
			b.WriteByte(letters[min(rng.IntN(26), rng.IntN(26))])
		}
		return b.String()
	}
	punct := `.,;:!?'"()[]{}<>-_=+*/\|&^%$#@~` + "`"
	for len(pieces) < n {
		switch r := rng.IntN(100); {
		case r < 45:
			add(" " + word())
		case r < 70:
			add(word())
		case r < 78:
			w := word()
			add(strings.ToUpper(w[:1]) + w[1:])
		case r < 83:
			add(strings.Repeat("0123456789"[rng.IntN(10):][:1], 1+rng.IntN(3)))
		case r < 90:
			var b strings.Builder
			for range 1 + rng.IntN(3) {
				b.WriteByte(punct[rng.IntN(len(punct))])
			}
			add(b.String())
		case r < 94:
			add(word() + string(punct[rng.IntN(len(punct))]))
		case r < 96:
			add(strings.Repeat(" ", 2+rng.IntN(30)))
		default:
			var b strings.Builder
			for range 1 + rng.IntN(3) {
				b.WriteRune(rune(0x4e00 + rng.IntN(20000)))
			}
			add(b.String())
		}
	}
	return NewVocab(len(pieces), func(id int) string { return pieces[id] }, []int{0})
}

// tokenize splits s into the vocabulary's longest pieces, as a model
// that writes s would emit it.
func tokenize(v *Vocab, s string) []int {
	byPiece := map[string]int{}
	for id := range v.Size() {
		if p := v.Piece(id); p != "" {
			byPiece[p] = id
		}
	}
	var ids []int
	for len(s) > 0 {
		for n := min(len(s), 16); n > 0; n-- {
			if id, ok := byPiece[s[:n]]; ok {
				ids = append(ids, id)
				s = s[n:]
				break
			}
		}
	}
	return ids
}

var benchV *Vocab

func vocab150k() *Vocab {
	if benchV == nil {
		benchV = benchVocab(150_000)
	}
	return benchV
}

// benchDoc runs a matcher over doc's tokens, masking before each.
func benchDoc(b *testing.B, g *Grammar, ids []int, logits []float32) {
	m := g.NewMatcher()
	for i, id := range ids {
		m.Mask(logits, 1000-i)
		if err := m.Accept(id); err != nil {
			b.Fatal(err)
		}
	}
}

func weatherExpr() *Expr {
	str := Seq(Lit(`"`), Star(Class(Range{' ', '!'}, Range{'#', '['}, Range{']', '~'})), Lit(`"`))
	num := Seq(Opt(Lit("-")), Repeat(Class(Range{'0', '9'}), 1, 16))
	ws := Opt(Lit(" "))
	return Seq(Lit("{"), ws, Members(Seq(Lit(","), ws), []Member{
		{Seq(Lit(`"city":`), ws, str), true},
		{Seq(Lit(`"days":`), ws, num), true},
		{Seq(Lit(`"unit":`), ws, Alt(Lit(`"celsius"`), Lit(`"fahrenheit"`))), false},
	}), ws, Lit("}"))
}

const weatherDoc = `{"city": "The quick brown fox jumps over the lazy dog near Paris", "days": 12, "unit": "celsius"}`

// BenchmarkMaskDocument is the cost per token of Mask and Accept over a
// whole document on a 150k vocabulary, the grammar's masks already kept
// (warm: every request after the first with this schema).
func BenchmarkMaskDocument(b *testing.B) {
	v := vocab150k()
	g, err := Compile(v, weatherExpr(), DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	ids := tokenize(v, weatherDoc)
	logits := make([]float32, v.Size())
	benchDoc(b, g, ids, logits)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		benchDoc(b, g, ids, logits)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids))/1000, "µs/token")
}

// BenchmarkMaskDocumentCold is the same for a grammar's first request:
// each state's mask is computed by walking the trie.
func BenchmarkMaskDocumentCold(b *testing.B) {
	v := vocab150k()
	ids := tokenize(v, weatherDoc)
	logits := make([]float32, v.Size())
	x := weatherExpr()
	b.ResetTimer()
	for range b.N {
		g, err := Compile(v, x, DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		benchDoc(b, g, ids, logits)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids))/1000, "µs/token")
}

// BenchmarkMaskString is one warm mask inside a free string, where
// nearly every token is allowed, and BenchmarkMaskStructural one after
// a key, where few are.
func BenchmarkMaskString(b *testing.B) { benchMaskAt(b, `{"city": "The`) }

func BenchmarkMaskStructural(b *testing.B) { benchMaskAt(b, `{"city": "Paris",`) }

func benchMaskAt(b *testing.B, prefix string) {
	v := vocab150k()
	g, err := Compile(v, weatherExpr(), DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	m := g.NewMatcher()
	for _, id := range tokenize(v, prefix) {
		if err := m.Accept(id); err != nil {
			b.Fatal(err)
		}
	}
	logits := make([]float32, v.Size())
	m.Mask(logits, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Mask(logits, 1000)
	}
}

// BenchmarkMaskTight is a mask when the budget forces the document
// closed: not kept, walked each time.
func BenchmarkMaskTight(b *testing.B) {
	v := vocab150k()
	g, err := Compile(v, weatherExpr(), DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	m := g.NewMatcher()
	for _, id := range tokenize(v, `{"city": "The`) {
		if err := m.Accept(id); err != nil {
			b.Fatal(err)
		}
	}
	logits := make([]float32, v.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Mask(logits, 9) // 6 tokens close it, 11 bytes: the budget binds
	}
}

// BenchmarkLazyFree is a lazy grammar's mask before its trigger.
func BenchmarkLazyFree(b *testing.B) {
	v := vocab150k()
	g, err := CompileLazy(v, Lazy{Triggers: []string{"<tool_call>"}, After: []*Expr{weatherExpr()}}, DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	m := g.NewMatcher()
	logits := make([]float32, v.Size())
	id := tokenize(v, " the")[0]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Mask(logits, 1000)
		_ = m.Accept(id)
	}
}

func BenchmarkNewVocab(b *testing.B) {
	v := vocab150k()
	for range b.N {
		NewVocab(v.Size(), v.Piece, []int{0})
	}
}

var _ = utf8.RuneLen
