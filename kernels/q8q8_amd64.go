//go:build amd64 && !purego

package kernels

import (
	"math"
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
