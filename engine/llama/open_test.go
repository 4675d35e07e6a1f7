package llama

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/tokenizer"
	"github.com/kiln-ai/kiln/kernels"
)

// TestTinyDeterministic checks that kiln-tiny is the same model every time.
func TestTinyDeterministic(t *testing.T) {
	a, err := Open(TinyID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenTiny()
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != TinyID || a.Tokenizer == nil || a.Template == nil {
		t.Fatalf("Open(%q) = {ID %q, tokenizer %v, template %v}", TinyID, a.ID, a.Tokenizer != nil, a.Template != nil)
	}
	if diff := cmp.Diff(TinyConfig(), a.Model.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if p := a.Model.Config.Params(true); p < 15e6 || p > 25e6 {
		t.Errorf("kiln-tiny has %d parameters, want about 15-20M", p)
	}
	la := sequenceLogits(a.Model, []int{1, 500, 600})
	lb := sequenceLogits(b.Model, []int{1, 500, 600})
	if diff := cmp.Diff(la, lb); diff != "" {
		t.Errorf("two builds differ (-first +second):\n%s", diff)
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}

// TestTinyReadsAsWords samples kiln-tiny and checks that its output is made
// of words, varies, and depends on the prompt.
func TestTinyReadsAsWords(t *testing.T) {
	l, err := OpenTiny()
	if err != nil {
		t.Fatal(err)
	}
	tok := l.Tokenizer
	pool := kernels.NewPool(2)
	defer pool.Close()
	generate := func(prompt string, temp float32, n int) []int {
		ids := append([]int{tok.BOS()}, tok.Encode(prompt)...)
		s := l.Model.NewState(1, pool)
		logits := prefill(s, 0, 0, ids, 16)
		rng := rand.New(rand.NewPCG(1, 2))
		var out []int
		for i := range n {
			next := argmax(logits)
			if temp > 0 {
				next = sample(logits, temp, rng)
			}
			out = append(out, next)
			s.Forward([]Row{{Pos: len(ids) + i, Token: next, Logits: true}}, [][]float32{logits})
		}
		return out
	}
	sampled := generate("Once upon a time", 1, 200)
	text := tok.Decode(sampled)
	t.Logf("sampled: %s", text)
	distinct := map[int]bool{}
	for _, id := range sampled {
		distinct[id] = true
		if ty := tok.Type(id); ty != tokenizer.TypeNormal {
			t.Errorf("sampled token %d %q of type %v", id, tok.Token(id), ty)
		}
	}
	if len(distinct) < 100 {
		t.Errorf("200 samples hold %d distinct tokens, want at least 100", len(distinct))
	}
	words := strings.Fields(text)
	if len(words) < 150 {
		t.Errorf("200 tokens decode to %d words, want at least 150", len(words))
	}
	greedyA := generate("Once upon a time", 0, 40)
	greedyB := generate("the cat sat on the mat", 0, 40)
	t.Logf("greedy: %s | %s", tok.Decode(greedyA), tok.Decode(greedyB))
	if cmp.Equal(greedyA, greedyB) {
		t.Errorf("greedy continuation does not depend on the prompt: %v", greedyA)
	}
	distinct = map[int]bool{}
	for _, id := range greedyA {
		distinct[id] = true
	}
	if len(distinct) < 2 {
		t.Errorf("greedy output repeats one token: %v", greedyA)
	}
}

// sample draws from softmax(logits/temp).
func sample(logits []float32, temp float32, rng *rand.Rand) int {
	p := make([]float32, len(logits))
	for i, v := range logits {
		p[i] = v / temp
	}
	kernels.Softmax(p)
	u := rng.Float32()
	for i, v := range p {
		if u -= v; u <= 0 {
			return i
		}
	}
	return len(p) - 1
}

// TestOpen loads each kind of spec and checks the id, the tokenizer and the
// template that come with it, and that a GGUF file is released by Close.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	small, err := NewRandom(Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 32}, 9, false)
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := WriteLlama2C(nil, small)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vocab := func(w *gguf.Writer) {
		toks := make([]string, 40)
		types := make([]int32, 40)
		scores := make([]float32, 40)
		toks[0], types[0] = "<unk>", int32(tokenizer.TypeUnknown)
		toks[1], types[1] = "<s>", int32(tokenizer.TypeControl)
		toks[2], types[2] = "</s>", int32(tokenizer.TypeControl)
		for i := 3; i < 40; i++ {
			toks[i], types[i] = fmt.Sprintf("▁w%d", i), int32(tokenizer.TypeNormal)
		}
		w.SetString("tokenizer.ggml.model", "llama")
		w.SetStrings("tokenizer.ggml.tokens", toks)
		w.SetInt32s("tokenizer.ggml.token_type", types)
		w.SetFloat32s("tokenizer.ggml.scores", scores)
		w.SetUint32("tokenizer.ggml.bos_token_id", 1)
		w.SetUint32("tokenizer.ggml.eos_token_id", 2)
		w.SetString("tokenizer.chat_template", "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}")
	}
	withVocab := ggufBytes(t, small, kernels.F32, vocab)
	tests := []struct {
		name          string
		spec          string
		wantID        string
		wantTokenizer bool
		wantTemplate  bool
	}{
		{"tiny", TinyID, TinyID, true, true},
		{"llama2.c", write("story.bin", ckpt), "story", false, false},
		{"gguf with vocabulary", write("chat-model.gguf", withVocab), "chat-model", true, true},
		{"gguf without vocabulary", write("bare.GGUF", ggufBytes(t, small, kernels.Q8_0, nil)), "bare", false, false},
		{"gguf by magic", write("weights.bin", withVocab), "weights", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Open(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{l.ID, l.Tokenizer != nil, l.Template != nil}
			if diff := cmp.Diff([]any{tc.wantID, tc.wantTokenizer, tc.wantTemplate}, got); diff != "" {
				t.Errorf("(id, has tokenizer, has template) (-want +got):\n%s", diff)
			}
			logits := sequenceLogits(l.Model, []int{1, 2, 3})
			for _, v := range logits[2] {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("non-finite logit %v", v)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
	t.Run("gguf equals llama2.c", func(t *testing.T) {
		a, err := Open(filepath.Join(dir, "story.bin"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(filepath.Join(dir, "chat-model.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = b.Close() }()
		toks := []int{1, 5, 9, 13}
		if diff := cmp.Diff(sequenceLogits(a.Model, toks), sequenceLogits(b.Model, toks)); diff != "" {
			t.Errorf("memory-mapped GGUF logits differ from the checkpoint's (-llama2.c +gguf):\n%s", diff)
		}
	})
	for _, tc := range []struct {
		name, spec, want string
		is               error
	}{
		{"missing", filepath.Join(dir, "absent.bin"), "absent.bin", os.ErrNotExist},
		{"missing gguf", filepath.Join(dir, "absent.gguf"), "absent.gguf", os.ErrNotExist},
		{"bad gguf", write("bad.gguf", []byte("GGUF\x03\x00\x00\x00")), "bad.gguf", ErrFormat},
		{"empty", write("empty.bin", nil), "truncated", ErrFormat},
		{"mismatched vocabulary", write("short-vocab.gguf", ggufBytes(t, small, kernels.F32, func(w *gguf.Writer) {
			vocab(w)
			w.SetStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>"})
			w.SetInt32s("tokenizer.ggml.token_type", []int32{2, 3, 3})
			w.SetFloat32s("tokenizer.ggml.scores", []float32{0, 0, 0})
		})), "tokenizer has 3 tokens", ErrFormat},
	} {
		t.Run("error/"+tc.name, func(t *testing.T) {
			_, err := Open(tc.spec)
			if err == nil || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open(%s) error %v, want %v mentioning %q", tc.spec, err, tc.is, tc.want)
			}
		})
	}
}
