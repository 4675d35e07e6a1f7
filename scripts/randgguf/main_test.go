package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/tokenizer"
	"github.com/kiln-ai/kiln/kernels"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunWritesLoadableModel writes the 15M shape as Q8_0 and opens it as
// kiln does: the shape, the tokenizer and the chat template must come back.
func TestRunWritesLoadableModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s15.gguf")
	if err := run([]string{"--shape", "15M", "--type", "q8_0", "--out", path}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	l, err := llama.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}()
	c := l.Model.Config
	got := [7]int{c.Dim, c.HiddenDim, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen}
	if diff := cmp.Diff([7]int{288, 768, 6, 6, 6, 32000, 256}, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if !l.Model.Tied() {
		t.Error("classifier is untied; the stories models share the embedding")
	}
	if l.Tokenizer == nil || l.Template == nil {
		t.Fatalf("tokenizer %v, template %v: want both", l.Tokenizer, l.Template)
	}
	if got := l.Tokenizer.StopIDs(); !slices.Contains(got, 31999) {
		t.Errorf("stop ids %v lack <|im_end|> (31999)", got)
	}
}

func TestRunRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"shape", []string{"--shape", "7B", "--out", "x"}, "--shape"},
		{"type", []string{"--type", "q4_k", "--out", "x"}, "--type"},
		{"no output", []string{"--shape", "15M"}, "--out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(%q) = %v, want an error naming %s", tc.args, err, tc.want)
			}
		})
	}
}

// TestVocabTokenizes reads the vocabulary back through kiln's GGUF
// tokenizer, at the stories size and at Qwen's: common words are one token
// each, text round-trips, and the special pieces sit where the metadata
// says.
func TestVocabTokenizes(t *testing.T) {
	for _, n := range []int{vocabSize, shapes["qwen2.5-0.5b"].Vocab} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			v, tok := vocabTokenizer(t, n)
			for _, tc := range []struct {
				text string
				want int // tokens, BOS excluded
			}{
				{"the", 1}, {"was", 1}, {"because", 1}, {"people", 1}, {"little", 1},
				{"the little dog said that it was happy", 8},
				{"Hello, world!", 0}, // only round-tripped
			} {
				ids := tok.Encode(tc.text)
				if tc.want > 0 && len(ids) != tc.want {
					t.Errorf("Encode(%q) = %d tokens %v, want %d", tc.text, len(ids), ids, tc.want)
				}
				if got := tok.Decode(ids); got != tc.text {
					t.Errorf("Decode(Encode(%q)) = %q", tc.text, got)
				}
			}
			special := map[string]int{"<unk>": v.UNK, "<s>": v.BOS, "</s>": v.EOS, "<|im_end|>": v.EOT, "<0x0A>": 3 + '\n'}
			for piece, id := range special {
				if got, ok := tok.ID(piece); !ok || got != id {
					t.Errorf("ID(%q) = %d, %v; want %d", piece, got, ok, id)
				}
			}
		})
	}
}

// TestQwenVocabIsVisible: in Qwen's 151,936 pieces no piece is unused, so
// every token a random model picks decodes to text (a streamed reply has a
// first content chunk at its first token), and a reply of random pieces
// tokenizes again to about as many tokens as were generated.
func TestQwenVocabIsVisible(t *testing.T) {
	n := shapes["qwen2.5-0.5b"].Vocab
	v, tok := vocabTokenizer(t, n)
	for id, typ := range v.Types {
		if tokenizer.TokenType(typ) == tokenizer.TypeUnused {
			t.Fatalf("piece %d (%q) is unused", id, v.Pieces[id])
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []int
	for len(ids) < 400 {
		id := rng.IntN(n)
		if tokenizer.TokenType(v.Types[id]) != tokenizer.TypeNormal {
			continue
		}
		if tok.Decode([]int{id}) == "" {
			t.Fatalf("piece %d (%q) decodes to nothing", id, v.Pieces[id])
		}
		ids = append(ids, id)
	}
	again := tok.Encode(tok.Decode(ids))
	if r := float64(len(again)) / float64(len(ids)); r < 0.8 || r > 1.5 {
		t.Errorf("%d random pieces tokenize again to %d tokens (x%.2f), want about as many", len(ids), len(again), r)
	}
}

func vocabTokenizer(t *testing.T, n int) (*Vocabulary, *tokenizer.Tokenizer) {
	t.Helper()
	v, err := Vocab(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Pieces) != n || len(v.Scores) != n || len(v.Types) != n {
		t.Fatalf("%d pieces, %d scores, %d types; want %d each", len(v.Pieces), len(v.Scores), len(v.Types), n)
	}
	w := gguf.NewWriter()
	setTokenizer(w, v)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return v, tok
}

// TestQwenShapeLoads writes Qwen2.5-0.5B's shape with fewer and narrower
// layers (the full one is 2 GB of F32) and opens it as kiln does: the
// qwen2 layout (Q/K/V biases, half-split RoPE, theta 1e6), the whole
// vocabulary and the tied classifier come back.
func TestQwenShapeLoads(t *testing.T) {
	c := shapes["qwen2.5-0.5b"]
	c.Dim, c.HiddenDim, c.Layers, c.SeqLen = 112, 64, 1, 64
	path := filepath.Join(t.TempDir(), "q.gguf")
	if err := write(path, c, kernels.F32, 1, "random qwen"); err != nil {
		t.Fatal(err)
	}
	l, err := llama.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}()
	got := l.Model.Config
	want := c
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if !l.Model.Tied() {
		t.Error("classifier is untied; Qwen2.5-0.5B shares the embedding")
	}
	if got := l.Tokenizer.StopIDs(); !slices.Contains(got, c.Vocab-1) {
		t.Errorf("stop ids %v lack <|im_end|> (%d)", got, c.Vocab-1)
	}
}

func TestLetterPieces(t *testing.T) {
	var got []string
	seen := map[string]bool{}
	for p := range letterPieces {
		if len(got) < 3 {
			got = append(got, p)
		}
		if seen[p] {
			t.Fatalf("%q twice", p)
		}
		for _, q := range prefixes(p) {
			if !seen[q] {
				t.Fatalf("%q comes before its prefix %q", p, q)
			}
		}
		seen[p] = true
	}
	if diff := cmp.Diff([]string{"aa", "ab", "ac"}, got); diff != "" {
		t.Errorf("first pieces (-want +got):\n%s", diff)
	}
	if want := 2 * (26*26 + 26*26*26 + 26*26*26*26); len(seen) != want {
		t.Errorf("%d pieces, want %d", len(seen), want)
	}
}

func TestPrefixes(t *testing.T) {
	for _, tc := range []struct {
		piece string
		want  []string
	}{
		{space + "the", []string{space + "th"}},
		{space + "dogs", []string{space + "do", space + "dog"}},
		{space + "at", nil},
		{"x", nil},
	} {
		if diff := cmp.Diff(tc.want, prefixes(tc.piece)); diff != "" {
			t.Errorf("prefixes(%q) (-want +got):\n%s", tc.piece, diff)
		}
	}
}
