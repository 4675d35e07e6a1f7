package llama

import (
	"math"
	"testing"

	"github.com/kiln-ai/kiln/kernels"
)

// FuzzLoadGGUFQuant mutates small GGUF models whose matrices are of the
// legacy, K-quant and BF16 types: whatever the bytes, loading either fails
// with an error wrapping ErrFormat or yields a model whose matrices are
// valid for their types and that runs a step without panicking.
func FuzzLoadGGUFQuant(f *testing.F) {
	small := Config{Dim: 32, HiddenDim: 32, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 6, SeqLen: 4}
	for i, typ := range []kernels.DType{kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1, kernels.BF16} {
		f.Add(quantSeed(f, small, typ, i%2 == 0))
	}
	f.Add(quantSeed(f, Config{Dim: 256, HiddenDim: 256, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 3, SeqLen: 4}, kernels.Q4_K, true))
	f.Fuzz(func(t *testing.T, data []byte) { checkGGUFLoad(t, data) })
}

// quantSeed is a random model of shape c with every matrix random valid
// blocks of typ, written as GGUF.
func quantSeed(tb testing.TB, c Config, typ kernels.DType, untied bool) []byte {
	tb.Helper()
	m, err := NewRandom(c, uint64(typ), untied)
	if err != nil {
		tb.Fatal(err)
	}
	return ggufBytes(tb, randomQuantModel(tb, m, typ, 1), typ, nil)
}

// TestGGUFQuantRoundTrip writes random models (a llama and a Qwen3.5
// hybrid) of every quantized type as GGUF and loads them back: the
// matrices keep their type and bytes (they alias the file, no dequantized
// copy), and the logits equal those of the in-memory model bit for bit.
func TestGGUFQuantRoundTrip(t *testing.T) {
	dense := Config{Dim: 256, HiddenDim: 512, Layers: 1, Heads: 4, KVHeads: 2, Vocab: 9, SeqLen: 8}
	hybrid := Config{Arch: "qwen35", Dim: 256, HiddenDim: 512, Layers: 2, Heads: 2, KVHeads: 1, HeadSize: 128, Vocab: 9, SeqLen: 8,
		Rope: RopeNeoX, QKNorm: true, RotaryDim: 32, AttnGate: true, FullAttnInterval: 2,
		Linear: LinearShape{KeyHeads: 2, ValueHeads: 4, KeyDim: 32, ValueDim: 64, ConvKernel: 4, Tiled: true}}
	for _, c := range []Config{dense, hybrid} {
		testGGUFQuantRoundTrip(t, c)
	}
}

func testGGUFQuantRoundTrip(t *testing.T, c Config) {
	for _, typ := range []kernels.DType{kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1, kernels.Q8_0,
		kernels.Q2_K, kernels.Q3_K, kernels.Q4_K, kernels.Q5_K, kernels.Q6_K, kernels.BF16} {
		t.Run(c.Arch+"/"+typ.String(), func(t *testing.T) {
			base, err := NewRandom(c, 3, true)
			if err != nil {
				t.Fatal(err)
			}
			want := randomQuantModel(t, base, typ, 5)
			data := ggufBytes(t, want, typ, nil)
			got := parseGGUFModel(t, data)
			if got.Layers[0].W2.Type != typ || got.Output.Type != typ {
				t.Fatalf("loaded types %v/%v, want %v", got.Layers[0].W2.Type, got.Output.Type, typ)
			}
			if string(got.Layers[0].W2.Raw) != string(want.Layers[0].W2.Raw) {
				t.Fatal("ffn_down bytes changed through GGUF")
			}
			if c.Hybrid() && string(got.Layers[0].Lin.WQKV.Raw) != string(want.Layers[0].Lin.WQKV.Raw) {
				t.Fatal("attn_qkv bytes changed through GGUF")
			}
			tokens := []int{1, 8, 3, 3}
			wl, gl := sequenceLogits(want, tokens), sequenceLogits(got, tokens)
			for i := range wl {
				for j := range wl[i] {
					if math.Float32bits(wl[i][j]) != math.Float32bits(gl[i][j]) || math.IsNaN(float64(gl[i][j])) {
						t.Fatalf("pos %d logit %d: %v after GGUF, %v before", i, j, gl[i][j], wl[i][j])
					}
				}
			}
		})
	}
}
