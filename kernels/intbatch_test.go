package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIntBatchInvisible: on every path, each row of a batched integer
// product (rows met two at a time by the multi-row kernels) is
// bit-identical to the same row multiplied alone, so that batching
// requests together never changes one request's logits.
func TestIntBatchInvisible(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, path := range Paths() {
		pool, err := NewPoolOpts(1, Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		for _, typ := range intTypes {
			cols := 2 * QK_K
			w := randMatrix(t, rng, typ, 7, cols)
			t.Run(fmt.Sprintf("%s/%v", path, typ), func(t *testing.T) {
				const batch = 5
				x := randVec(rng, batch*cols)
				got := make([]float32, batch*w.Rows)
				pool.MatMul(got, w, x, batch)
				want := make([]float32, batch*w.Rows)
				for b := range batch {
					pool.MatMul(want[b*w.Rows:(b+1)*w.Rows], w, x[b*cols:(b+1)*cols], 1)
				}
				bits := func(v []float32) []uint32 {
					out := make([]uint32, len(v))
					for i, f := range v {
						out[i] = math.Float32bits(f)
					}
					return out
				}
				if d := cmp.Diff(bits(want), bits(got)); d != "" {
					t.Errorf("batched rows differ from rows alone (-alone +batched bits):\n%s", d)
				}
			})
		}
	}
}
