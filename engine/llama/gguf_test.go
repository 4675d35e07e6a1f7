package llama

import (
	"github.com/kiln-ai/kiln/internal/testshared"

	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/kernels"
)

// ggufBytes writes m as GGUF with matrices of type typ.
func ggufBytes(tb testing.TB, m *Model, typ kernels.DType, extra func(*gguf.Writer)) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := WriteGGUF(&buf, m, typ, extra); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func parseGGUFModel(tb testing.TB, data []byte) *Model {
	tb.Helper()
	f, err := gguf.Parse(data)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := FromGGUF(f, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// sequenceLogits runs tokens through a fresh one-slot state token by token
// and returns the logits after each.
func sequenceLogits(m *Model, tokens []int) [][]float32 {
	return sequenceLogitsOn(m, tokens, nil)
}

// sequenceLogitsOn is sequenceLogits on pool (nil: a pool of one worker).
func sequenceLogitsOn(m *Model, tokens []int, pool *kernels.Pool) [][]float32 {
	s := m.NewState(1, pool)
	var out [][]float32
	for i, tok := range tokens {
		l := make([]float32, m.Config.Vocab)
		s.Forward([]Row{{Pos: i, Token: tok, Logits: true}}, [][]float32{l})
		out = append(out, l)
	}
	return out
}

// TestGGUFMatchesLlama2C writes the stories260K weights (and an untied
// random model) to GGUF: stored as F32 they give identical logits to the
// llama2.c load; as F16 and Q8_0, close logits and the same greedy choice.
func TestGGUFMatchesLlama2C(t *testing.T) {
	untied, err := NewRandom(Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 77, SeqLen: 32}, 11, true)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]*Model{"random-untied": untied}
	if _, err := testshared.Path("models", "stories260K.bin"); err == nil {
		models["stories260K"] = loadStories(t)
	} else {
		t.Logf("stories260K not available, checking the random model only: %v", err)
	}
	for name, ref := range models {
		tokens := []int{1, 30, 40, 50, 26, 27, 1, 5}
		want := sequenceLogits(ref, tokens)
		for _, tc := range []struct {
			typ kernels.DType
			tol float64 // relative to the largest logit
		}{
			{kernels.F32, 0},
			{kernels.F16, 2e-3},
			{kernels.Q8_0, 6e-2}, // a 64-wide model quantises coarsely
		} {
			t.Run(fmt.Sprintf("%s/%v", name, tc.typ), func(t *testing.T) {
				m := parseGGUFModel(t, ggufBytes(t, ref, tc.typ, nil))
				if diff := cmp.Diff(ref.Config, m.Config); diff != "" {
					t.Fatalf("config (-llama2.c +gguf):\n%s", diff)
				}
				if m.Tied() != ref.Tied() {
					t.Fatalf("tied = %v, want %v", m.Tied(), ref.Tied())
				}
				// With float activations (the kernels' exact reference; the
				// default integer products quantize them, as llama.cpp does)
				// the quantised model computes what an F32 model holding its
				// dequantised weights computes.
				fp, err := kernels.NewPoolOpts(1, kernels.Options{FloatActivations: true})
				if err != nil {
					t.Fatal(err)
				}
				defer fp.Close()
				got := sequenceLogitsOn(m, tokens, fp)
				exact := sequenceLogits(dequantModel(m), tokens)
				for i := range exact {
					if d := maxDiff(exact[i], got[i]); d > 1e-4*max(1, maxAbs(exact[i])) {
						t.Errorf("pos %d: logits differ from the dequantised model's by %g", i, d)
					}
				}
				for i := range want {
					d := maxDiff(want[i], got[i])
					if d > tc.tol*max(1, maxAbs(want[i])) {
						t.Errorf("pos %d: logits differ by %g (tolerance %g relative)", i, d, tc.tol)
					}
					if tc.typ != kernels.Q8_0 && argmax(want[i]) != argmax(got[i]) {
						t.Errorf("pos %d: greedy token %d, want %d", i, argmax(got[i]), argmax(want[i]))
					}
				}
			})
		}
	}
}

// TestGGUFErrors checks that every malformed model is a clear error that
// names the problem and wraps ErrFormat.
func TestGGUFErrors(t *testing.T) {
	base, err := NewRandom(Config{Dim: 32, HiddenDim: 64, Layers: 1, Heads: 4, KVHeads: 2, Vocab: 20, SeqLen: 16}, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	good := ggufBytes(t, base, kernels.F32, nil)
	if _, err := FromGGUF(mustParse(t, good), 0); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	tests := []struct {
		name  string
		extra func(w *gguf.Writer)
		data  func() []byte // instead of extra, when set
		want  string
	}{
		{name: "unsupported architecture", extra: func(w *gguf.Writer) { w.SetString("general.architecture", "gpt2") }, want: `architecture "gpt2" is not supported; supported: llama, qwen2, qwen3`},
		{name: "keys of another architecture", extra: func(w *gguf.Writer) { w.SetString("general.architecture", "qwen2") }, want: "qwen2.embedding_length missing"},
		{name: "value length differs", extra: func(w *gguf.Writer) {
			w.SetUint32("llama.attention.key_length", 8)
			w.SetUint32("llama.attention.value_length", 16)
		}, want: "value_length 16"},
		{name: "rope factors wrong length", extra: func(w *gguf.Writer) { w.AddTensor("rope_freqs.weight", []uint64{3}, gguf.TypeF32, make([]byte, 12)) }, want: "rope_freqs.weight has shape [3], want [4]"},
		{name: "rope factor zero", extra: func(w *gguf.Writer) { w.AddTensor("rope_freqs.weight", []uint64{4}, gguf.TypeF32, make([]byte, 16)) }, want: "rope factor 0 is 0"},
		{name: "zero heads", extra: func(w *gguf.Writer) { w.SetUint32("llama.attention.head_count", 0) }, want: "head_count = 0"},
		{name: "dim not multiple of heads", extra: func(w *gguf.Writer) { w.SetUint32("llama.attention.head_count", 5) }, want: "not a multiple of n_heads"},
		{name: "kv heads do not divide", extra: func(w *gguf.Writer) { w.SetUint32("llama.attention.head_count_kv", 3) }, want: "n_kv_heads 3"},
		{name: "wrong hidden size", extra: func(w *gguf.Writer) { w.SetUint32("llama.feed_forward_length", 65) }, want: "ffn_gate.weight has shape"},
		{name: "extra layer", extra: func(w *gguf.Writer) { w.SetUint32("llama.block_count", 2) }, want: "blk.1.attn_q.weight missing"},
		{name: "unexpected tensor", extra: func(w *gguf.Writer) { w.AddTensor("blk.0.attn_q.bias", []uint64{32}, gguf.TypeF32, make([]byte, 128)) }, want: "attn_q.bias is not part"},
		{name: "rope scaling", extra: func(w *gguf.Writer) { w.SetString("llama.rope.scaling.type", "linear") }, want: "rope.scaling.type"},
		{name: "partial rotary", extra: func(w *gguf.Writer) { w.SetUint32("llama.rope.dimension_count", 4) }, want: "dimension_count 4"},
		{name: "missing context length", data: func() []byte { return ggufWithout(t, good, "llama.context_length", "") }, want: "llama.context_length missing"},
		{name: "missing tensor", data: func() []byte { return ggufWithout(t, good, "", "blk.0.ffn_up.weight") }, want: "blk.0.ffn_up.weight missing"},
		{name: "unsupported tensor type", data: func() []byte { return ggufRetype(t, good, "blk.0.attn_k.weight", gguf.TypeIQ4_NL) }, want: "type IQ4_NL; supported: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, BF16"},
		{name: "bad epsilon", extra: func(w *gguf.Writer) { w.SetFloat32("llama.attention.layer_norm_rms_epsilon", -1) }, want: "epsilon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			if tc.data != nil {
				data = tc.data()
			} else {
				data = ggufBytes(t, base, kernels.F32, tc.extra)
			}
			f, err := gguf.Parse(data)
			if err != nil {
				t.Fatalf("gguf.Parse: %v", err)
			}
			_, err = FromGGUF(f, 0)
			if err == nil {
				t.Fatalf("FromGGUF succeeded, want error containing %q", tc.want)
			}
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want ErrFormat and %q", err, tc.want)
			}
		})
	}
}

func mustParse(tb testing.TB, data []byte) *gguf.File {
	tb.Helper()
	f, err := gguf.Parse(data)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// rewriteGGUF copies the file through a Writer, letting edit change each
// key (return false to drop) and tensor (return false to drop).
func rewriteGGUF(tb testing.TB, data []byte, keepKey func(string) bool, tensor func(t *gguf.TensorInfo, data []byte) (uint32, []byte, bool)) []byte {
	tb.Helper()
	f := mustParse(tb, data)
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if kv.Key != gguf.KeyAlignment && keepKey(kv.Key) {
			w.Set(kv.Key, kv.Value)
		}
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		b, err := f.TensorData(ti)
		if err != nil {
			tb.Fatal(err)
		}
		typ, nb, keep := tensor(ti, b)
		if keep {
			w.AddTensor(ti.Name, ti.Dims, typ, nb)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func ggufWithout(tb testing.TB, data []byte, key, tensor string) []byte {
	return rewriteGGUF(tb, data, func(k string) bool { return k != key }, func(t *gguf.TensorInfo, b []byte) (uint32, []byte, bool) {
		return t.Type, b, t.Name != tensor
	})
}

func ggufRetype(tb testing.TB, data []byte, tensor string, typ uint32) []byte {
	return rewriteGGUF(tb, data, func(string) bool { return true }, func(t *gguf.TensorInfo, b []byte) (uint32, []byte, bool) {
		if t.Name != tensor {
			return t.Type, b, true
		}
		size, err := gguf.TensorSize(typ, t.Dims)
		if err != nil {
			tb.Fatal(err)
		}
		return typ, make([]byte, size), true
	})
}

// FuzzLoadGGUF mutates a small valid GGUF model: whatever the bytes, loading
// either fails with an error or yields a model whose tensors match its
// configuration and that runs a step without panicking.
func FuzzLoadGGUF(f *testing.F) {
	for i, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		m, err := NewRandom(Config{Dim: 32, HiddenDim: 32, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 6, SeqLen: 4}, uint64(i), i == 1)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(ggufBytes(f, m, typ, nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkGGUFLoad(t, data) })
}

// checkGGUFLoad is the property of the GGUF fuzz targets: loading data
// either fails with an error wrapping ErrFormat or yields a valid model
// (context capped at 64) that runs a step without panicking.
func checkGGUFLoad(t *testing.T, data []byte) {
	gf, err := gguf.Parse(data)
	if err != nil {
		return
	}
	m, err := FromGGUF(gf, 64)
	if err != nil {
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("error does not wrap ErrFormat: %v", err)
		}
		return
	}
	if err := m.validate(); err != nil {
		t.Fatalf("loaded an invalid model: %v", err)
	}
	if m.Config.SeqLen > 64 {
		t.Fatalf("seq_len %d above the cap 64", m.Config.SeqLen)
	}
	if m.Config.Dim*m.Config.Vocab > 1<<16 || m.Config.Layers > 4 || m.Config.HiddenDim > 1024 {
		return // keep the run cheap; loading was the point
	}
	s := m.NewState(1, nil)
	s.Forward([]Row{{Token: m.Config.Vocab - 1, Logits: true}}, [][]float32{make([]float32, m.Config.Vocab)})
}

// dequantModel is m with every matrix converted to F32.
func dequantModel(m *Model) *Model {
	conv := func(w *kernels.Matrix) kernels.Matrix {
		f := make([]float32, w.Rows*w.Cols)
		for r := range w.Rows {
			dequantRow(f[r*w.Cols:(r+1)*w.Cols], w, r)
		}
		return kernels.Matrix{Rows: w.Rows, Cols: w.Cols, Type: kernels.F32, F32: f}
	}
	return mapMatrices(m, conv)
}

// mapMatrices is a copy of m (norms, biases, RoPE factors and all) whose
// every weight matrix is conv of m's; a tied classifier stays tied.
func mapMatrices(m *Model, conv func(*kernels.Matrix) kernels.Matrix) *Model {
	out := *m
	out.closer = nil
	out.Embed = conv(&m.Embed)
	out.Layers = make([]Layer, len(m.Layers))
	for i, l := range m.Layers {
		if l.Lin != nil {
			d := *l.Lin
			l.Lin = &d
		}
		for _, w := range l.matrices() {
			*w = conv(w)
		}
		out.Layers[i] = l
	}
	if m.Tied() {
		out.Output = &out.Embed
	} else {
		o := conv(m.Output)
		out.Output = &o
	}
	return &out
}
