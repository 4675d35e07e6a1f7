package kernels

import (

	"golang.org/x/sys/cpu"
)

// haveAVX2 reports whether the AVX2/FMA/F16C kernels may run. It is fixed at
// start-up from CPUID and never changes.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// Implemented in kernels_amd64.s. The w pointers are four weight rows (a
// short block repeats its last row), n is the number of columns (a multiple
// of 8; for Q8_0 the number of 32-weight blocks), out receives row r's dot
// with x (and with x1 at out[4+r] in the 4x2 forms).
//
//go:noescape
func f32x4x1(w0, w1, w2, w3, x *float32, n int, out *[8]float32)

//go:noescape
func f32x4x2(w0, w1, w2, w3, x0, x1 *float32, n int, out *[8]float32)

//go:noescape
func f16x4x1(w0, w1, w2, w3 *byte, x *float32, n int, out *[8]float32)

//go:noescape
func f16x4x2(w0, w1, w2, w3 *byte, x0, x1 *float32, n int, out *[8]float32)

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

// matMulRowsArch runs MatMulRows with the AVX2 kernels; false means the
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
		f32Rows(out, w, x, batch, lo, hi)
	case F16:
		if w.Cols < 8 {
			return false
		}
		f16Rows(out, w, x, batch, lo, hi)
	case Q8_0:
		q8Rows(out, w, x, batch, lo, hi)
	default:
		return false
	}
	return true
}

func f32Rows(out []float32, w *Matrix, x []float32, batch, lo, hi int) {
	cols, rows := w.Cols, w.Rows
	n := cols &^ 7
	var res [8]float32
	for r := lo; r < hi; r += 4 {
		r0, r1, r2, r3, k := rowBlock(r, hi)
		p0, p1, p2, p3 := &w.F32[r0*cols], &w.F32[r1*cols], &w.F32[r2*cols], &w.F32[r3*cols]
		b := 0
		for ; b+2 <= batch; b += 2 {
			x0, x1 := x[b*cols:(b+1)*cols], x[(b+1)*cols:(b+2)*cols]
			f32x4x2(p0, p1, p2, p3, &x0[0], &x1[0], n, &res)
			for i := range k {
				row := w.F32[(r+i)*cols : (r+i+1)*cols]
				s0, s1 := res[i], res[4+i]
				for c := n; c < cols; c++ {
					s0 += row[c] * x0[c]
					s1 += row[c] * x1[c]
				}
				out[b*rows+r+i] = s0
				out[(b+1)*rows+r+i] = s1
			}
		}
		if b < batch {
			x0 := x[b*cols : (b+1)*cols]
			f32x4x1(p0, p1, p2, p3, &x0[0], n, &res)
			for i := range k {
				row := w.F32[(r+i)*cols : (r+i+1)*cols]
				s0 := res[i]
				for c := n; c < cols; c++ {
					s0 += row[c] * x0[c]
				}
				out[b*rows+r+i] = s0
			}
		}
	}
}

func f16Rows(out []float32, w *Matrix, x []float32, batch, lo, hi int) {
	cols, rows := w.Cols, w.Rows
	n := cols &^ 7
	rb := 2 * cols
	var res [8]float32
	tail := func(row []byte, xs []float32, s float32) float32 {
		for c := n; c < cols; c++ {
			s += HalfToFloat(uint16(row[2*c])|uint16(row[2*c+1])<<8) * xs[c]
		}
		return s
	}
	for r := lo; r < hi; r += 4 {
		r0, r1, r2, r3, k := rowBlock(r, hi)
		p0, p1, p2, p3 := &w.Raw[r0*rb], &w.Raw[r1*rb], &w.Raw[r2*rb], &w.Raw[r3*rb]
		b := 0
		for ; b+2 <= batch; b += 2 {
			x0, x1 := x[b*cols:(b+1)*cols], x[(b+1)*cols:(b+2)*cols]
			f16x4x2(p0, p1, p2, p3, &x0[0], &x1[0], n, &res)
			for i := range k {
				row := w.Raw[(r+i)*rb : (r+i+1)*rb]
				out[b*rows+r+i] = tail(row, x0, res[i])
				out[(b+1)*rows+r+i] = tail(row, x1, res[4+i])
			}
		}
		if b < batch {
			x0 := x[b*cols : (b+1)*cols]
			f16x4x1(p0, p1, p2, p3, &x0[0], n, &res)
			for i := range k {
				out[b*rows+r+i] = tail(w.Raw[(r+i)*rb:(r+i+1)*rb], x0, res[i])
			}
		}
	}
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

