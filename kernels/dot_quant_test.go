package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantProducts checks the block-by-block products of every quantized
// type against the float64 dot product of the DequantRow values: the two
// agree to float32 rounding (1e-5 relative to sum |w_i*x_i|), for several
// blocks per row, odd row counts, batches of 1 to 5, and through both
// matMulRows and a Pool with float activations (the integer products are
// TestIntProducts').
func TestQuantProducts(t *testing.T) {
	const tol = 1e-5
	rng := rand.New(rand.NewPCG(9, 10))
	pool, err := NewPoolOpts(3, Options{FloatActivations: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, typ := range quantTypes {
		elems, _, _ := typ.Block()
		if elems == 1 {
			elems = 8
		}
		for _, nb := range []int{1, 2, 3} {
			cols := nb * elems
			for _, rows := range []int{1, 5, 9} {
				w := randMatrix(t, rng, typ, rows, cols)
				t.Run(fmt.Sprintf("%v/%dx%d", typ, rows, cols), func(t *testing.T) {
					for batch := 1; batch <= 5; batch++ {
						x := randVec(rng, batch*cols)
						want := refProduct(w, x, batch)
						scale := absDots(w, x, batch)
						got := make([]float32, batch*rows)
						matMulRows(got, w, x, batch, 0, rows)
						pooled := make([]float32, batch*rows)
						pool.MatMul(pooled, w, x, batch)
						for i := range want {
							if d := math.Abs(float64(got[i]) - want[i]); d > tol*scale[i]+1e-30 {
								t.Fatalf("batch %d out[%d] = %v, want %v (diff %g, scale %g)", batch, i, got[i], want[i], d, scale[i])
							}
							if pooled[i] != got[i] {
								t.Fatalf("batch %d out[%d]: pool %v, matMulRows %v", batch, i, pooled[i], got[i])
							}
						}
					}
				})
			}
		}
	}
}

// refProduct is w times each batch row of x in float64 over DequantRow's
// values.
func refProduct(w *Matrix, x []float32, batch int) []float64 {
	out := make([]float64, batch*w.Rows)
	for r := range w.Rows {
		row := dequantRow(w, r)
		for b := range batch {
			var s float64
			for c, v := range row {
				s += float64(v) * float64(x[b*w.Cols+c])
			}
			out[b*w.Rows+r] = s
		}
	}
	return out
}

// BenchmarkMatMulQuant measures the default products of the quantized
// types (integer products where the type has them, else the Go
// block-by-block float products; BenchmarkIntVsFloat compares the two) on
// a 4096x4096 matrix (one vector, as in single-stream decode) with 1 and 2
// workers. MB/s counts weight bytes; GFLOP/s counts 2*rows*cols.
func BenchmarkMatMulQuant(b *testing.B) {
	for _, typ := range quantTypes {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%v/4096x4096/b1/w%d", typ, workers), func(b *testing.B) {
				benchMatMul(b, typ, 4096, 4096, 1, workers, false)
			})
		}
	}
}
