package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// qwen35VocabSize is the size of Qwen3.5's vocabulary.
const qwen35VocabSize = 248320

// largeBPE is a synthetic byte-level BPE vocabulary of exactly n pieces:
// the 256 byte symbols, merges in rank order (every pair of the 52 ASCII
// letters, then every pair plus a letter, then pairs of pairs until the
// size is reached), and 33 control tokens, as many as Qwen3.5 has. A word
// of four letters whose first pair ranks low enough ("abcd") merges into
// one piece; "Qwen" stops at "Qw" "en" (no rule joins those two).
func largeBPE(n int) (pieces []string, types []int32, merges []string) {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	specials := []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
	for i := len(specials); i < 33; i++ {
		specials = append(specials, fmt.Sprintf("<|special_%d|>", i))
	}
	for _, r := range byteRune {
		pieces = append(pieces, string(r))
	}
	budget := n - len(pieces) - len(specials)
	add := func(l, r string) bool {
		if len(merges) == budget {
			return false
		}
		merges = append(merges, l+" "+r)
		pieces = append(pieces, l+r)
		return true
	}
	var pairs []string
	for i := range len(letters) {
		for j := range len(letters) {
			pairs = append(pairs, letters[i:i+1]+letters[j:j+1])
			add(letters[i:i+1], letters[j:j+1])
		}
	}
	for _, p := range pairs {
		for j := range len(letters) {
			add(p, letters[j:j+1])
		}
	}
fill:
	for _, p := range pairs {
		for _, q := range pairs {
			if !add(p, q) {
				break fill
			}
		}
	}
	types = make([]int32, len(pieces), n)
	for i := range types {
		types[i] = int32(TypeNormal)
	}
	for _, s := range specials {
		pieces = append(pieces, s)
		types = append(types, int32(TypeControl))
	}
	return pieces, types, merges
}

// TestQwen35SizedVocabulary loads a vocabulary of Qwen3.5's 248,320 pieces
// from GGUF (pre-tokenizer qwen35) and from tokenizer.json (Qwen3.5's split
// pattern), and encodes with it. Nothing caps the vocabulary below that;
// the load times are logged (go test -v), not asserted.
func TestQwen35SizedVocabulary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 248,320-piece vocabulary")
	}
	pieces, types, merges := largeBPE(qwen35VocabSize)
	if len(pieces) != qwen35VocabSize {
		t.Fatalf("built %d pieces, want %d", len(pieces), qwen35VocabSize)
	}

	w := gguf.NewWriter()
	w.SetString(keyModel, "gpt2")
	w.SetString(keyPre, "qwen35")
	w.SetStrings(keyTokens, pieces)
	w.SetInt32s(keyTokenType, types)
	w.SetStrings(keyMerges, merges)
	w.SetUint32(keyEOS, uint32(qwen35VocabSize-31)) // <|im_end|>
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	fromGGUF, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GGUF: %d pieces, %d merges: parsed and loaded in %v", len(pieces), len(merges), time.Since(start))

	vocab := make(map[string]int, len(pieces))
	var added []hfAddedToken
	for id, p := range pieces {
		if TokenType(types[id]) == TypeControl {
			added = append(added, hfAddedToken{ID: id, Content: p, Special: true})
			continue
		}
		vocab[p] = id
	}
	doc, err := json.Marshal(map[string]any{
		"added_tokens": added,
		"normalizer":   map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": patternQwen35}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": merges},
	})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	fromHF, err := FromHuggingFace(doc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tokenizer.json: %d MB loaded in %v", len(doc)>>20, time.Since(start))

	id := func(tok *Tokenizer, p string) int {
		t.Helper()
		v, ok := tok.ID(p)
		if !ok {
			t.Fatalf("no piece %q", p)
		}
		return v
	}
	text := "abcd Qwen नमस्ते café 2026\n\n<|im_end|>"
	for name, tok := range map[string]*Tokenizer{"gguf": fromGGUF, "tokenizer.json": fromHF} {
		t.Run(name, func(t *testing.T) {
			if tok.VocabSize() != qwen35VocabSize || tok.split != splitQwen35 {
				t.Fatalf("vocabulary %d pieces, split %d; want %d, splitQwen35", tok.VocabSize(), tok.split, qwen35VocabSize)
			}
			if tok.Token(qwen35VocabSize-1) != "<|special_32|>" {
				t.Errorf("last piece %q", tok.Token(qwen35VocabSize-1))
			}
			want := []int{id(tok, "abcd"), id(tok, "Ġ"), id(tok, "Qw"), id(tok, "en")}
			if diff := cmp.Diff(want, tok.Encode("abcd Qwen")); diff != "" {
				t.Errorf("Encode mismatch (-want +got):\n%s", diff)
			}
			ids := tok.EncodeSpecial(text)
			if got := tok.Decode(ids); got != text {
				t.Errorf("Decode(EncodeSpecial(%q)) = %q", text, got)
			}
			if last := ids[len(ids)-1]; last != id(tok, "<|im_end|>") {
				t.Errorf("last id %d, want <|im_end|>", last)
			}
			start := time.Now()
			n := 0
			for range 20 {
				n += len(tok.EncodeSpecial(benchPrompt))
			}
			t.Logf("encoded 20 x %d bytes into %d tokens in %v", len(benchPrompt), n, time.Since(start))
		})
	}
}

// BenchmarkLoadQwen35Sized measures FromGGUF on a parsed 248,320-piece
// vocabulary (Qwen3.5's size).
func BenchmarkLoadQwen35Sized(b *testing.B) {
	pieces, types, merges := largeBPE(qwen35VocabSize)
	w := gguf.NewWriter()
	w.SetString(keyModel, "gpt2")
	w.SetString(keyPre, "qwen35")
	w.SetStrings(keyTokens, pieces)
	w.SetInt32s(keyTokenType, types)
	w.SetStrings(keyMerges, merges)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromGGUF(f); err != nil {
			b.Fatal(err)
		}
	}
}
