package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/tokenizer"
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
// tokenizer: common words are one token each, text round-trips, and the
// special pieces sit where the metadata says.
func TestVocabTokenizes(t *testing.T) {
	v, err := Vocab(vocabSize)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Pieces) != vocabSize || len(v.Scores) != vocabSize || len(v.Types) != vocabSize {
		t.Fatalf("%d pieces, %d scores, %d types; want %d each", len(v.Pieces), len(v.Scores), len(v.Types), vocabSize)
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
