//go:build amd64 && !purego

package kernels

import "unsafe"

// Implemented in matmul_float_tiles_amd64.s: the avx512 path's F32, F16 and BF16
// products.
// A 4xJ tile multiplies four weight rows (w, ws bytes apart) by J
// activation rows (x, xs bytes apart) over n columns, prefetching a line
// of each of the four rows at pf a step, and stores (add == 0) or adds
// activation row j's four sums at out + j*ostride bytes. The one-row
// kernels multiply rows weight rows by one activation row of n columns,
// summing chunk columns at a time, row r's sum to out[r]. Every kernel
// gives a (weight row, activation row) pair the same sum, bit for bit,
// given the same chunking (matmul_float_tiles_amd64.s says why).
//
//go:noescape
func f32z4x1(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f16z4x1(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f32z4x2(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f32z4x3(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f32z4x4(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f32z4x6(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f16z4x2(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f16z4x3(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f16z4x4(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func f16z4x6(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

// The BF16 forms of the same kernels.
//
//go:noescape
func bf16z4x1(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func bf16z4x2(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func bf16z4x3(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func bf16z4x4(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func bf16z4x6(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)

//go:noescape
func bf16z1(w unsafe.Pointer, ws uintptr, rows int, x *float32, n, chunk int, out *float32)

//go:noescape
func f32z1(w unsafe.Pointer, ws uintptr, rows int, x *float32, n, chunk int, out *float32)

//go:noescape
func f16z1(w unsafe.Pointer, ws uintptr, rows int, x *float32, n, chunk int, out *float32)

// zChunk is the column chunk of the avx512 float products: four weight
// rows of one chunk (16 KiB of F32) stay in L1 while the batch's
// activation rows meet them six at a time. Every kernel, the one-row ones
// included, sums a long row chunk by chunk at the same boundaries, so the
// chunking never depends on the batch and a row's result never depends
// on which rows share its product.
const zChunk = 1024

// zKernels selects the F32, F16 or BF16 kernels (its type); direct calls,
// not func values.
type zKernels struct{ typ DType }

func (k zKernels) one(w unsafe.Pointer, ws uintptr, rows int, x *float32, n int, out *float32) {
	switch k.typ {
	case F16:
		f16z1(w, ws, rows, x, n, zChunk, out)
	case BF16:
		bf16z1(w, ws, rows, x, n, zChunk, out)
	default:
		f32z1(w, ws, rows, x, n, zChunk, out)
	}
}

// tile runs the 4xj tile, j one of 1, 2, 3, 4, 6.
func (k zKernels) tile(j int, w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int) {
	switch k.typ {
	case F16:
		switch j {
		case 6:
			f16z4x6(w, ws, pf, x, xs, n, out, ostride, add)
		case 4:
			f16z4x4(w, ws, pf, x, xs, n, out, ostride, add)
		case 3:
			f16z4x3(w, ws, pf, x, xs, n, out, ostride, add)
		case 2:
			f16z4x2(w, ws, pf, x, xs, n, out, ostride, add)
		default:
			f16z4x1(w, ws, pf, x, xs, n, out, ostride, add)
		}
	case BF16:
		switch j {
		case 6:
			bf16z4x6(w, ws, pf, x, xs, n, out, ostride, add)
		case 4:
			bf16z4x4(w, ws, pf, x, xs, n, out, ostride, add)
		case 3:
			bf16z4x3(w, ws, pf, x, xs, n, out, ostride, add)
		case 2:
			bf16z4x2(w, ws, pf, x, xs, n, out, ostride, add)
		default:
			bf16z4x1(w, ws, pf, x, xs, n, out, ostride, add)
		}
	default:
		switch j {
		case 6:
			f32z4x6(w, ws, pf, x, xs, n, out, ostride, add)
		case 4:
			f32z4x4(w, ws, pf, x, xs, n, out, ostride, add)
		case 3:
			f32z4x3(w, ws, pf, x, xs, n, out, ostride, add)
		case 2:
			f32z4x2(w, ws, pf, x, xs, n, out, ostride, add)
		default:
			f32z4x1(w, ws, pf, x, xs, n, out, ostride, add)
		}
	}
}

// zSplit is how a batch's rest after its tiles of six is covered: one or
// two more tiles (b may be 0).
var zSplit = [6]struct{ a, b int }{
	0: {},
	1: {a: 1},
	2: {a: 2},
	3: {a: 3},
	4: {a: 4},
	5: {a: 3, b: 2},
}

// floatRowsZ runs rows [lo,hi) of an F32, F16 or BF16 product with the avx512
// kernels: four weight rows at a time, one column chunk at a time,
// against six activation rows per tile call (then 4, 3, 2 or 1), so a
// chunk of four rows stays in L1 while the whole batch meets it, and each
// call prefetches the next block of weights; a batch of one is the 4x1
// tile over every group. Rows of a last group of fewer than four run on
// the one-row kernel. false means w is another type (or the CPU has no
// AVX-512) and the caller must use another kernel.
func floatRowsZ(out []float32, w *Matrix, x []float32, batch, lo, hi int) bool {
	if !haveAVX512 {
		return false
	}
	var base unsafe.Pointer
	var k zKernels
	elem := 4
	switch w.Type {
	case F32:
		base = unsafe.Pointer(unsafe.SliceData(w.F32))
	case F16, BF16:
		base, k, elem = unsafe.Pointer(unsafe.SliceData(w.Raw)), zKernels{typ: w.Type}, 2
	default:
		return false
	}
	cols, rows := w.Cols, w.Rows
	if lo >= hi || batch <= 0 {
		return true
	}
	_, _ = x[batch*cols-1], out[(batch-1)*rows+hi-1]
	ws, xs, ostride := uintptr(cols*elem), uintptr(cols)*4, uintptr(rows)*4
	six := batch / 6 * 6
	rest := zSplit[batch-six]
	r := lo
	for ; r+4 <= hi; r += 4 {
		wr := unsafe.Add(base, uintptr(r)*ws)
		for c0 := 0; c0 < cols; c0 += zChunk {
			n, add := min(zChunk, cols-c0), min(c0, 1)
			pw := unsafe.Add(wr, c0*elem)
			// The block after this one: the next chunk, else the next
			// group's first (or this block again at the end).
			pf := pw
			if c0+zChunk < cols {
				pf = unsafe.Add(pw, zChunk*elem)
			} else if r+8 <= hi {
				pf = unsafe.Add(wr, 4*ws)
			}
			b := 0
			for ; b < six; b += 6 {
				k.tile(6, pw, ws, pf, &x[b*cols+c0], xs, n, &out[b*rows+r], ostride, add)
			}
			if rest.a != 0 {
				k.tile(rest.a, pw, ws, pf, &x[b*cols+c0], xs, n, &out[b*rows+r], ostride, add)
				b += rest.a
			}
			if rest.b != 0 {
				k.tile(rest.b, pw, ws, pf, &x[b*cols+c0], xs, n, &out[b*rows+r], ostride, add)
			}
		}
	}
	if r < hi {
		wr := unsafe.Add(base, uintptr(r)*ws)
		for b := range batch {
			k.one(wr, ws, hi-r, &x[b*cols], cols, &out[b*rows+r])
		}
	}
	return true
}
