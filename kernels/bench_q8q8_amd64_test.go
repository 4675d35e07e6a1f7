//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// An experiment kept for measurement: ggml's way of multiplying Q8_0
// weights, quantizing the activation vector to int8 blocks first and doing
// the block dots in integer arithmetic. BenchmarkQ8Variants compares it with
// the float dequantization MatMul uses (see BENCHMARKS.md for why MatMul
// keeps the latter).

//go:noescape
func q8q8x4x1(w0, w1, w2, w3 unsafe.Pointer, xq *byte, xd *float32, n int, out *[8]float32)

// quantizeAct writes x (a multiple of 32 values) as int8 blocks xq with
// float32 scales xd, rounding to nearest.
func quantizeAct(xq []byte, xd []float32, x []float32) {
	for k := range len(x) / Q8Block {
		blk := x[k*Q8Block : (k+1)*Q8Block]
		d, id := q8Scale(blk)
		xd[k] = d
		q := xq[k*Q8Block : (k+1)*Q8Block]
		for j, v := range blk {
			q[j] = byte(int8(math.Round(float64(v * id))))
		}
	}
}

// q8q8Rows is rows [lo,hi) of a one-vector Q8_0 product through q8q8x4x1;
// xq and xd hold x quantized by quantizeAct.
func q8q8Rows(out []float32, w *Matrix, xq []byte, xd []float32, lo, hi int) {
	nb := w.Cols / Q8Block
	rb := nb * Q8BlockBytes
	xq, xd = xq[:nb*Q8Block], xd[:nb]
	var res [8]float32
	for r := lo; r < hi; r += 4 {
		r0, r1, r2, r3, k := rowBlock(r, hi)
		p := func(i int) unsafe.Pointer { return unsafe.Pointer(&w.Raw[i*rb]) }
		q8q8x4x1(p(r0), p(r1), p(r2), p(r3), &xq[0], &xd[0], nb, &res)
		copy(out[r:r+k], res[:k])
	}
}

// TestQ8Q8MatchesExact bounds the integer-dot experiment against the exact
// product of dequantized weights and x: the only extra error is x's
// quantization, at most half a step d_x/2 per element.
func TestQ8Q8MatchesExact(t *testing.T) {
	if !haveAVX2 {
		t.Skip("CPU lacks AVX2/FMA/F16C")
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for _, cols := range []int{32, 96, 4096} {
		const rows = 13
		w := randMatrix(t, rng, Q8_0, rows, cols)
		w.Raw[2] = 0x80 // a -128 quant, which ggml's format allows
		x := randVec(rng, cols)
		xq, xd := make([]byte, cols), make([]float32, cols/Q8Block)
		quantizeAct(xq, xd, x)
		got := make([]float32, rows)
		q8q8Rows(got, w, xq, xd, 0, rows)
		for r := range rows {
			row := dequantRow(w, r)
			var exact, bound float64
			for c, v := range row {
				exact += float64(v) * float64(x[c])
				bound += math.Abs(float64(v)) * (float64(xd[c/Q8Block])/2 + 1e-6*math.Abs(float64(x[c])))
			}
			if d := math.Abs(float64(got[r]) - exact); d > bound {
				t.Errorf("cols %d row %d: got %v, exact %v (diff %g > bound %g)", cols, r, got[r], exact, d, bound)
			}
		}
	}
}

// BenchmarkQ8Variants compares, for one vector, the float dequantization
// kernel MatMul uses with ggml's int8 dot (quantization of x included). The
// two alternate call by call so that a shared, noisy machine slows both
// alike; it reports each one's mean time and GFLOP/s and their ratio.
func BenchmarkQ8Variants(b *testing.B) {
	for _, shape := range []struct{ rows, cols int }{{4096, 4096}, {768, 288}, {32000, 288}} {
		w := benchMatrix(b, Q8_0, shape.rows, shape.cols)
		x := randVec(rand.New(rand.NewPCG(1, 1)), shape.cols)
		out := make([]float32, shape.rows)
		xq, xd := make([]byte, shape.cols), make([]float32, shape.cols/Q8Block)
		flops := 2 * float64(shape.rows) * float64(shape.cols)
		b.Run(fmt.Sprintf("%dx%d", shape.rows, shape.cols), func(b *testing.B) {
			b.ReportAllocs()
			var tf, ti time.Duration
			for b.Loop() {
				t0 := time.Now()
				q8Rows(out, w, x, 1, 0, shape.rows)
				t1 := time.Now()
				quantizeAct(xq, xd, x)
				q8q8Rows(out, w, xq, xd, 0, shape.rows)
				t2 := time.Now()
				tf += t1.Sub(t0)
				ti += t2.Sub(t1)
			}
			n := float64(b.N)
			b.ReportMetric(flops*n/tf.Seconds()/1e9, "f32deq-GFLOP/s")
			b.ReportMetric(flops*n/ti.Seconds()/1e9, "int8-GFLOP/s")
			b.ReportMetric(tf.Seconds()/ti.Seconds(), "int8-speedup")
		})
	}
}
