//go:build amd64 && !purego

package kernels

import (
	"math/bits"
	"unsafe"
)

// intRowsPacked runs rows [lo,hi) of an integer product over w's packed
// copy with the avx512 kernels: a group of sixteen rows at a time against
// eight activation rows at a time (then four, two, one for the rest),
// the group's weights staying in L1/L2 meanwhile. A group cut by lo or hi
// is computed whole and stored through a lane mask. false means w has no
// packed copy and the caller must use another kernel.
func intRowsPacked(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool {
	p := packedOf(w)
	if p == nil || !haveAVX512 {
		return false
	}
	kern := packKernel(w.Type)
	if !kern.has() {
		return false
	}
	if lo >= hi || batch <= 0 {
		return true
	}
	var nb int
	var xa0 unsafe.Pointer
	var xs uintptr // bytes from one activation row to the next
	if intFormat(w.Type) == actQ8K {
		nb = w.Cols / QK_K
		xa0, xs = unsafe.Pointer(&act.q8k[:batch*nb][0]), uintptr(nb)*unsafe.Sizeof(q8KAct{})
	} else {
		nb = w.Cols / Q8Block
		xa0, xs = unsafe.Pointer(&act.q8[:batch*nb][0]), uintptr(nb)*unsafe.Sizeof(q8Act{})
	}
	rows := w.Rows
	_ = out[(batch-1)*rows+hi-1]
	ostride := uintptr(rows) * 4
	quant := uintptr(p.quant)
	for g := lo / packRows; g*packRows < hi; g++ {
		r0 := g * packRows
		mask := 1<<(min(hi, r0+packRows)-r0) - 1
		mask &^= 1<<(max(lo, r0)-r0) - 1
		grp := p.groupAt(g)
		for b := 0; b < batch; {
			// The widest kernel that fits: 8, 4, 2 or 1 rows.
			k := min(3, bits.Len(uint(batch-b))-1)
			kern.call(k, grp, quant, unsafe.Add(xa0, uintptr(b)*xs), xs, nb, &out[b*rows+r0], ostride, mask)
			b += 1 << k
		}
	}
	return true
}

// intRowsAMX runs rows [lo,hi) of a Q8_0 product over w's packed copy on
// the amx path: each whole set of sixteen activation rows against every
// group with one AMX kernel call, the rest of the batch through
// intRowsPacked, whose results are bit for bit the same. false means
// the product is not one for it (no packed Q8_0 copy, fewer than sixteen
// activation rows, or no AMX).
func intRowsAMX(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool {
	p := packedOf(w)
	if p == nil || !haveAMX || w.Type != Q8_0 || batch < packRows {
		return false
	}
	if lo >= hi {
		return true
	}
	nb, rows := w.Cols/Q8Block, w.Rows
	full := batch / packRows * packRows
	xs := uintptr(nb) * unsafe.Sizeof(q8Act{})
	xa, tab := act.q8[:batch*nb], act.amx[:full/packRows*nb]
	_ = out[(batch-1)*rows+hi-1]
	ostride, quant := uintptr(rows)*4, uintptr(p.quant)
	var scratch [2048]byte
	// Group by group, each meeting every set of activation rows while it
	// is in L1/L2 (the activations of a prompt chunk stay in L2).
	for g := lo / packRows; g*packRows < hi; g++ {
		r0 := g * packRows
		mask := 1<<(min(hi, r0+packRows)-r0) - 1
		mask &^= 1<<(max(lo, r0)-r0) - 1
		for b := 0; b < full; b += packRows {
			x, t := unsafe.Pointer(&xa[b*nb]), unsafe.Pointer(&tab[b/packRows*nb])
			q8_0amx16(p.groupAt(g), quant, x, xs, t, nb, &out[b*rows+r0], ostride, mask, &scratch)
		}
	}
	if full < batch {
		rest := quantAct{q8: act.q8[full*nb : batch*nb]}
		intRowsPacked(out[full*rows:], w, &rest, batch-full, lo, hi)
	}
	return true
}
