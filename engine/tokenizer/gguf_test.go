package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// referenceCase is one string of llama.cpp's tokenizer test data with the
// ids llama.cpp produced (no BOS, special tokens not parsed).
type referenceCase struct {
	text string
	ids  []int
}

// readReference reads NAME.gguf.inp (strings separated by
// "\n__ggml_vocab_test__\n") and NAME.gguf.out (one line of ids each).
func readReference(t testing.TB, base string) []referenceCase {
	t.Helper()
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1] // the file ends with a separator
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d strings but %d result lines", base, len(texts), len(lines))
	}
	cases := make([]referenceCase, len(texts))
	for i, text := range texts {
		cases[i].text = text
		cases[i].ids = []int{}
		for _, f := range strings.Fields(lines[i]) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s line %d: %v", base, i+1, err)
			}
			cases[i].ids = append(cases[i].ids, id)
		}
	}
	return cases
}

func openGGUFTokenizer(t testing.TB, path string) *Tokenizer {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestGGUFReferences(t *testing.T) {
	dir := sharedDir(t, "tokenizers/gguf")
	for _, name := range []string{"ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			base := filepath.Join(dir, name)
			tok := openGGUFTokenizer(t, base)
			cases := readReference(t, base)
			if len(cases) < 40 {
				t.Fatalf("only %d reference cases read", len(cases))
			}
			for i, c := range cases {
				t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
					got := tok.Encode(c.text)
					if diff := cmp.Diff(c.ids, got); diff != "" {
						t.Errorf("Encode(%q) mismatch (-want +got):\n%s", c.text, diff)
					}
					if back := tok.Decode(got); back != c.text {
						t.Errorf("Decode(Encode(%q)) = %q", c.text, back)
					}
				})
			}
		})
	}
}

func TestGGUFReferenceMetadata(t *testing.T) {
	dir := sharedDir(t, "tokenizers/gguf")
	type meta struct {
		Vocab, BOS, EOS int
		AddBOS          bool
		Stop            []int
		HasTemplate     bool
	}
	tests := []struct {
		file string
		want meta
	}{
		// Phi-3 ends turns with <|end|> (32007), a control token.
		{"ggml-vocab-phi-3.gguf", meta{32064, 1, 32000, true, []int{32000, 32007}, true}},
		{"ggml-vocab-gpt-2.gguf", meta{50257, 50256, 50256, false, []int{50256}, false}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tok := openGGUFTokenizer(t, filepath.Join(dir, tt.file))
			got := meta{tok.VocabSize(), tok.BOS(), tok.EOS(), tok.AddBOS(), tok.StopIDs(), tok.ChatTemplate() != ""}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
