//go:build amd64 && !purego

package kernels

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveAVX2 reports whether the AVX2/FMA/F16C kernels may run. It is fixed at
// start-up from CPUID and never changes.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// haveAVX512 reports whether the avx512 kernels may run: AVX-512 F, BW, VL
// and VNNI (x/sys/cpu also checks that the OS saves the ZMM state), on top
// of the AVX2 kernels, which that path runs where it has no kernel of its
// own.
// haveAVXVNNI reports whether the avxvnni kernels may run: AVX-VNNI (the
// VEX form of VPDPBUSD) on top of the AVX2 kernels.
var haveAVXVNNI = haveAVX2 && cpu.X86.HasAVXVNNI

var haveAVX512 = haveAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// Implemented in kernels_amd64.s. The w pointers are four weight rows (a
// short block repeats its last row), n is the number of columns (a multiple
// of 8; for Q8_0 the number of 32-weight blocks), out receives row r's dot
// with x (and with x1 at out[4+r] in the 4x2 forms).
//
//go:noescape
func f32x4x1(w0, w1, w2, w3 unsafe.Pointer, x *float32, n int, out *[8]float32)

//go:noescape
func f32x4x2(w0, w1, w2, w3 unsafe.Pointer, x0, x1 *float32, n int, out *[8]float32)

// f32x4x3 (f32x3_amd64.s) is f32x4x2 for three activation vectors; out
// receives row r's dot with x_j at out[4j+r].
//
//go:noescape
func f32x4x3(w0, w1, w2, w3 unsafe.Pointer, x0, x1, x2 *float32, n int, out *[12]float32)

//go:noescape
func f16x4x1(w0, w1, w2, w3 unsafe.Pointer, x *float32, n int, out *[8]float32)

//go:noescape
func f16x4x2(w0, w1, w2, w3 unsafe.Pointer, x0, x1 *float32, n int, out *[8]float32)

// bf16x4x1 and bf16x4x2 are f16x4x1 and f16x4x2 for bfloat16 rows.
//
//go:noescape
func bf16x4x1(w0, w1, w2, w3 unsafe.Pointer, x *float32, n int, out *[8]float32)

//go:noescape
func bf16x4x2(w0, w1, w2, w3 unsafe.Pointer, x0, x1 *float32, n int, out *[8]float32)

//go:noescape
func q8x4x1(w0, w1, w2, w3 *byte, x *float32, n int, out *[8]float32)

//go:noescape
func q8x4x2(w0, w1, w2, w3 *byte, x0, x1 *float32, n int, out *[8]float32)

// dotAVX returns the dot product of n (a multiple of 8) values.
//
//go:noescape
func dotAVX(a, b *float32, n int) float32

// axpyAVX sets y[i] += alpha*x[i] for n (a multiple of 8) values.
//
//go:noescape
func axpyAVX(alpha float32, x, y *float32, n int)

func dotArch(a, b []float32) (float32, bool) {
	n := len(a) &^ 7
	if !haveAVX2 || n == 0 {
		return 0, false
	}
	b = b[:len(a)]
	s := dotAVX(&a[0], &b[0], n)
	for i := n; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s, true
}

func axpyArch(alpha float32, x, y []float32) bool {
	n := len(x) &^ 7
	if !haveAVX2 || n == 0 {
		return false
	}
	y = y[:len(x)]
	axpyAVX(alpha, &x[0], &y[0], n)
	for i := n; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
	return true
}

// rowBlock holds the four row indexes of one kernel call; rows past hi
// repeat the last real row and their results are dropped.
func rowBlock(r, hi int) (r0, r1, r2, r3, k int) {
	k = min(4, hi-r)
	last := r + k - 1
	return r, min(r+1, last), min(r+2, last), min(r+3, last), k
}

// matMulRowsArch runs matMulRows with the AVX2 kernels; false means the
// caller must use the generic code. Bounds were checked by checkMatMul.
func matMulRowsArch(out []float32, w *Matrix, x []float32, batch, lo, hi int) bool {
	if !haveAVX2 {
		return false
	}
	switch w.Type {
	case F32:
		if w.Cols < 8 {
			return false
		}
		denseRows(denseKernel{elem: 4}, unsafe.Pointer(&w.F32[0]), out, w, x, batch, lo, hi, f32Chunk)
	case F16, BF16:
		if w.Cols < 8 {
			return false
		}
		denseRows(denseKernel{elem: 2, typ: w.Type}, unsafe.Pointer(&w.Raw[0]), out, w, x, batch, lo, hi, f16Chunk)
	case Q8_0:
		q8Rows(out, w, x, batch, lo, hi)
	default:
		return false
	}
	return true
}

// Column chunks for batches of more than two rows: four weight rows of one
// chunk (16 KiB) stay in L1 while every pair of activation rows meets them.
const (
	f32Chunk = 1024
	f16Chunk = 2048
)

// denseKernel selects the 4x1/4x2 kernel pair of an element type; direct
// calls (not func values) keep the result array on the stack.
type denseKernel struct {
	elem int   // bytes per weight
	typ  DType // F32, F16 or BF16
}

func (k denseKernel) x1(p0, p1, p2, p3 unsafe.Pointer, x *float32, n int, res *[8]float32) {
	switch k.typ {
	case F16:
		f16x4x1(p0, p1, p2, p3, x, n, res)
	case BF16:
		bf16x4x1(p0, p1, p2, p3, x, n, res)
	default:
		f32x4x1(p0, p1, p2, p3, x, n, res)
	}
}

func (k denseKernel) x2(p0, p1, p2, p3 unsafe.Pointer, x0, x1 *float32, n int, res *[8]float32) {
	switch k.typ {
	case F16:
		f16x4x2(p0, p1, p2, p3, x0, x1, n, res)
	case BF16:
		bf16x4x2(p0, p1, p2, p3, x0, x1, n, res)
	default:
		f32x4x2(p0, p1, p2, p3, x0, x1, n, res)
	}
}

// denseRows runs rows [lo,hi) of an F32, F16 or BF16 product: four rows at a time,
// three (F32) or two batch rows per kernel call, columns in L1-sized chunks when the batch
// is large; the last cols%8 columns are added in Go.
func denseRows(kern denseKernel, base unsafe.Pointer, out []float32, w *Matrix, x []float32, batch, lo, hi, chunk int) {
	cols, rows := w.Cols, w.Rows
	n := cols &^ 7
	if batch <= 2 {
		chunk = n
	}
	rowBytes := uintptr(cols * kern.elem)
	if batch == 1 && kern.typ == F32 && n == cols {
		// One F32 row meets its weights a row at a time: one sequential
		// stream, which the hardware prefetcher follows better than four
		// interleaved ones (BenchmarkDecode batch=1, quiet, alternated:
		// stories15M 197-225 -> 215-247 tok/s, stories110M 34.9-36.7 ->
		// 37.7-38.0, about 16.6 GB/s).
		for r := lo; r < hi; r++ {
			out[r] = dotAVX(&w.F32[r*cols], &x[0], cols)
		}
		return
	}
	var res12 [12]float32
	res := (*[8]float32)(res12[:8])
	for r := lo; r < hi; r += 4 {
		r0, r1, r2, r3, k := rowBlock(r, hi)
		for c0 := 0; c0 < n; c0 += chunk {
			m := min(chunk, n-c0)
			off := uintptr(c0 * kern.elem)
			p0 := unsafe.Add(base, uintptr(r0)*rowBytes+off)
			p1 := unsafe.Add(base, uintptr(r1)*rowBytes+off)
			p2 := unsafe.Add(base, uintptr(r2)*rowBytes+off)
			p3 := unsafe.Add(base, uintptr(r3)*rowBytes+off)
			b := 0
			for ; b+3 <= batch && kern.typ == F32; b += 3 {
				f32x4x3(p0, p1, p2, p3, &x[b*cols+c0], &x[(b+1)*cols+c0], &x[(b+2)*cols+c0], m, &res12)
				store4(out[b*rows+r:], res12[:k], c0 == 0)
				store4(out[(b+1)*rows+r:], res12[4:4+k], c0 == 0)
				store4(out[(b+2)*rows+r:], res12[8:8+k], c0 == 0)
			}
			for ; b+2 <= batch; b += 2 {
				kern.x2(p0, p1, p2, p3, &x[b*cols+c0], &x[(b+1)*cols+c0], m, res)
				store4(out[b*rows+r:], res[:k], c0 == 0)
				store4(out[(b+1)*rows+r:], res[4:4+k], c0 == 0)
			}
			if b < batch {
				kern.x1(p0, p1, p2, p3, &x[b*cols+c0], m, res)
				store4(out[b*rows+r:], res[:k], c0 == 0)
			}
		}
		if n == cols {
			continue
		}
		for i := range k {
			for b := range batch {
				xs := x[b*cols : (b+1)*cols]
				var s float32
				for c := n; c < cols; c++ {
					s += weightAt(w, r+i, c) * xs[c]
				}
				out[b*rows+r+i] += s
			}
		}
	}
}

// store4 writes (first chunk) or adds the kernel's sums for k rows.
func store4(dst, res []float32, first bool) {
	if first {
		put4(dst, res)
		return
	}
	dst = dst[:len(res)]
	for i, v := range res {
		dst[i] += v
	}
}

// put4 writes a kernel's sums for k (len(res), 1 to 4) rows at dst; a
// full group takes plain stores rather than a copy (a memmove call per
// store was 3% of a small model's prefill).
func put4(dst, res []float32) {
	if len(res) == 4 {
		dst, res = dst[:4], res[:4]
		dst[0], dst[1], dst[2], dst[3] = res[0], res[1], res[2], res[3]
		return
	}
	copy(dst[:len(res)], res)
}

// weightAt is one F32, F16 or BF16 weight, for the column tails.
func weightAt(w *Matrix, r, c int) float32 {
	if w.Type == F32 {
		return w.F32[r*w.Cols+c]
	}
	i := 2 * (r*w.Cols + c)
	h := uint16(w.Raw[i]) | uint16(w.Raw[i+1])<<8
	if w.Type == BF16 {
		return math.Float32frombits(uint32(h) << 16)
	}
	return HalfToFloat(h)
}

func q8Rows(out []float32, w *Matrix, x []float32, batch, lo, hi int) {
	cols, rows := w.Cols, w.Rows
	nb := cols / Q8Block
	rb := nb * Q8BlockBytes
	var res [8]float32
	for r := lo; r < hi; r += 4 {
		r0, r1, r2, r3, k := rowBlock(r, hi)
		p0, p1, p2, p3 := &w.Raw[r0*rb], &w.Raw[r1*rb], &w.Raw[r2*rb], &w.Raw[r3*rb]
		b := 0
		for ; b+2 <= batch; b += 2 {
			q8x4x2(p0, p1, p2, p3, &x[b*cols], &x[(b+1)*cols], nb, &res)
			for i := range k {
				out[b*rows+r+i] = res[i]
				out[(b+1)*rows+r+i] = res[4+i]
			}
		}
		if b < batch {
			q8x4x1(p0, p1, p2, p3, &x[b*cols], nb, &res)
			for i := range k {
				out[b*rows+r+i] = res[i]
			}
		}
	}
}

// expSubSumAVX sets x[i] = e^(x[i]-sub) for n (a multiple of 8) values and
// returns their sum; siluAVX and swigluAVX are SiLU and SwiGLU over n values.
//
//go:noescape
func expSubSumAVX(x *float32, n int, sub float32) float32

//go:noescape
func siluAVX(x *float32, n int)

//go:noescape
func swigluAVX(h, gate *float32, n int)

// maxAVX is the largest of n (a multiple of 32) values, NaN skipped;
// indexAVX is the first of n (a multiple of 8) values equal to v, or -1;
// expScaleSumAVX sets dst[i] = e^((x[i]-sub)*scale) for n (a multiple of 8)
// values (0 under e^-87 and for NaN) and returns their float64 sum.
//
//go:noescape
func maxAVX(x *float32, n int) float32

//go:noescape
func indexAVX(x *float32, n int, v float32) int

//go:noescape
func expScaleSumAVX(dst, x *float32, n int, sub, scale float32) float64

// notBelowAVX is the first of n (a multiple of 8) values that is not below
// v (NaN included), or -1.
//
//go:noescape
func notBelowAVX(x *float32, n int, v float32) int

func notBelowArch(x []float32, v float32) (int, int) {
	n := len(x) &^ 7
	if !haveAVX2 || n == 0 {
		return -1, 0
	}
	return notBelowAVX(&x[0], n, v), n
}

func maxNumberArch(x []float32) (float32, int) {
	n := len(x) &^ 31
	if !haveAVX2 || n == 0 {
		return 0, 0
	}
	return maxAVX(&x[0], n), n
}

func indexArch(x []float32, v float32) (int, int) {
	n := len(x) &^ 7
	if !haveAVX2 || n == 0 {
		return -1, 0
	}
	return indexAVX(&x[0], n, v), n
}

func expScaleSumArch(dst, x []float32, sub, scale float32) (float64, int) {
	n := len(x) &^ 7
	if !haveAVX2 || n == 0 {
		return 0, 0
	}
	return expScaleSumAVX(&dst[0], &x[0], n, sub, scale), n
}

func expSubSumArch(x []float32, sub float32) (float32, bool) {
	n := len(x) &^ 7
	if !haveAVX2 || n == 0 {
		return 0, false
	}
	s := expSubSumAVX(&x[0], n, sub)
	for i := n; i < len(x); i++ {
		x[i] = expf(x[i] - sub)
		s += x[i]
	}
	return s, true
}

func siluArch(x []float32) bool {
	n := len(x) &^ 7
	if !haveAVX2 || n == 0 {
		return false
	}
	siluAVX(&x[0], n)
	for i := n; i < len(x); i++ {
		x[i] /= 1 + expf(-x[i])
	}
	return true
}

func swigluArch(h, g []float32) bool {
	n := len(h) &^ 7
	if !haveAVX2 || n == 0 {
		return false
	}
	g = g[:len(h)]
	swigluAVX(&h[0], &g[0], n)
	for i := n; i < len(h); i++ {
		h[i] = h[i] / (1 + expf(-h[i])) * g[i]
	}
	return true
}
