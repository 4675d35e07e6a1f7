package llama

import (
	"math"
	"testing"

	"github.com/kiln-ai/kiln/kernels"
)

// TestQwen35RowsOnPool: a random Qwen3.5 whose prefill rows are enough
// for the per-row work (convolution, gates, gated norm, attention gate)
// to run on the pool gives the same bits as on one goroutine, for a
// prompt prefilled in one step and in two pieces split at a multiple of
// the delta rule's chunk, and within float32 advice of the same prompt fed token by token.
func TestQwen35RowsOnPool(t *testing.T) {
	c := Config{Arch: "qwen35", Dim: 64, HiddenDim: 128, Layers: 4, Heads: 4, KVHeads: 1, HeadSize: 32, Vocab: 97, SeqLen: 512,
		Rope: RopeNeoX, QKNorm: true, RotaryDim: 8, AttnGate: true, FullAttnInterval: 2,
		Linear: LinearShape{KeyHeads: 2, ValueHeads: 4, KeyDim: 32, ValueDim: 32, ConvKernel: 4, Tiled: true}}
	m, err := NewRandom(c, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300 // 300 rows of ConvDim 256 and of VDim and QDim 128: past rowWork
	tokens := make([]int, n)
	for i := range tokens {
		tokens[i] = (i*31 + 7) % c.Vocab
	}
	run := func(workers int, pieces []int) [][]float32 {
		pool := kernels.NewPool(workers)
		defer pool.Close()
		return allLogits(m.NewState(2, pool), 1, tokens, pieces)
	}
	one := run(1, []int{n})
	for name, got := range map[string][][]float32{"one step on 2 workers": run(2, []int{n}), "pieces 128+172 on 2 workers": run(2, []int{128, 172})} {
		for p := range got {
			for j := range got[p] {
				if math.Float32bits(got[p][j]) != math.Float32bits(one[p][j]) {
					t.Fatalf("%s: position %d logit %d = %v, one goroutine %v", name, p, j, got[p][j], one[p][j])
				}
			}
		}
	}
	rec := run(2, chunks(n, 1))
	for p := range rec {
		for j := range rec[p] {
			if d := math.Abs(float64(rec[p][j] - one[p][j])); d > 1e-4 {
				t.Fatalf("token by token: position %d logit %d = %v, one step %v", p, j, rec[p][j], one[p][j])
			}
		}
	}
}
