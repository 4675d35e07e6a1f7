//go:build amd64 && !purego

package kernels

import "unsafe"

// q8_0x4x2n is q8_0x4x2 over pairs consecutive pairs of activation rows
// xs bytes apart, row j's four sums at out + j*ostride bytes: the pair
// loop in assembly (intdot_x2_amd64.s).
//
//go:noescape
func q8_0x4x2n(w0, w1, w2, w3, xa unsafe.Pointer, xs uintptr, pairs, n int, out *float32, ostride uintptr)

// callPairs is call2 over pairs consecutive pairs of activation rows
// from xa, xs bytes apart, with the pair loop in the assembly: row j's
// four sums go to out + j*ostride bytes. false means the type has no such
// kernel (only Q8_0, the prompts' common case, has one).
func (k intKernel) callPairs(p0, p1, p2, p3, xa unsafe.Pointer, xs uintptr, pairs, n int, out *float32, ostride uintptr) bool {
	if DType(k) != Q8_0 {
		return false
	}
	q8_0x4x2n(p0, p1, p2, p3, xa, xs, pairs, n, out, ostride)
	return true
}

// intRowsArch runs rows [lo,hi) of an integer product with the AVX2
// kernels, four weight rows at a time against every activation row of the
// batch in turn (two at a time where the type has a two-row kernel) (the four rows stay in L1 meanwhile, so each weight is
// read from memory once per product); false means the type has no
// assembly and the caller must use the generic code.
func intRowsArch(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool {
	f := intFormat(w.Type)
	if f == actFloat {
		return false
	}
	kq := f == actQ8K // the activations are q8KAct blocks, else q8Act
	if lo >= hi || batch <= 0 {
		return true
	}
	var nb int
	var xa0 unsafe.Pointer
	var xs uintptr // bytes from one activation row to the next
	if kq {
		nb = w.Cols / QK_K
		xa0, xs = unsafe.Pointer(&act.q8k[:batch*nb][0]), uintptr(nb)*unsafe.Sizeof(q8KAct{})
	} else {
		nb = w.Cols / Q8Block
		xa0, xs = unsafe.Pointer(&act.q8[:batch*nb][0]), uintptr(nb)*unsafe.Sizeof(q8Act{})
	}
	xa := func(b int) unsafe.Pointer { return unsafe.Add(xa0, uintptr(b)*xs) }
	kern := intKernel(w.Type)
	rb, rows := w.rowBytes(), w.Rows
	_ = out[(batch-1)*rows+hi-1]
	var res [8]float32
	for r := lo; r < hi; r += 4 {
		r0, r1, r2, r3, k := rowBlock(r, hi)
		p0, p1 := unsafe.Pointer(&w.Raw[r0*rb]), unsafe.Pointer(&w.Raw[r1*rb])
		p2, p3 := unsafe.Pointer(&w.Raw[r2*rb]), unsafe.Pointer(&w.Raw[r3*rb])
		b := 0
		if k == 4 && batch >= 2 && kern.callPairs(p0, p1, p2, p3, xa0, xs, batch/2, nb, &out[r], uintptr(rows)*4) {
			b = batch &^ 1
		}
		for ; b+2 <= batch && kern.call2(p0, p1, p2, p3, xa(b), xa(b+1), nb, &res); b += 2 {
			put4(out[b*rows+r:], res[:k])
			put4(out[(b+1)*rows+r:], res[4:4+k])
		}
		for ; b < batch; b++ {
			kern.call(p0, p1, p2, p3, xa(b), nb, &res)
			put4(out[b*rows+r:], res[:k])
		}
	}
	return true
}
