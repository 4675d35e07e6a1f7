//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestF32TileRows: the avx2 path's 4x3 F32 tile and its 4x2 one give
// every activation row bit-identical sums (one accumulator per pair, the
// same reduction), so a batch's split into tiles never changes a row's
// output: six rows (two 4x3 tiles) equal three pairs (4x2 tiles), with a
// column tail. (Columns stay within one f32Chunk: a batch of two is not
// chunked, a larger one is, and chunk sums round differently by design.
// The avx512 path guarantees more, TestFloatBatchInvisible.)
func TestF32TileRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const rows, cols, batch = 7, f32Chunk/2 + 24 + 3, 6
	w := randMatrix(t, rng, F32, rows, cols)
	x := randVec(rng, batch*cols)
	got := make([]float32, batch*rows)
	matMulRowsOn(pathAVX2, got, w, x, nil, batch, 0, rows)
	want := make([]float32, batch*rows)
	for b := 0; b < batch; b += 2 {
		matMulRowsOn(pathAVX2, want[b*rows:(b+2)*rows], w, x[b*cols:(b+2)*cols], nil, 2, 0, rows)
	}
	bits := func(v []float32) []uint32 {
		out := make([]uint32, len(v))
		for i, f := range v {
			out[i] = math.Float32bits(f)
		}
		return out
	}
	if d := cmp.Diff(bits(want), bits(got)); d != "" {
		t.Errorf("rows in 4x3 tiles differ from rows in 4x2 tiles (-pairs +triples bits):\n%s", d)
	}
}
