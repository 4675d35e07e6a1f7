//go:build amd64 && !purego

package kernels

import "unsafe"

// Implemented in intpack_amd64.s: the products of one packed group of
// sixteen weight rows (w, its quants quant bytes on) with n = 1, 2, 4 or
// 8 activation rows of nb q8Act blocks from xa, xs bytes apart; activation
// row j's sixteen sums go to out + j*ostride bytes, the lanes set in mask
// only.
//
//go:noescape
func q8_0p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q8_0p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q8_0p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q8_0p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

// intRowsPacked runs rows [lo,hi) of an integer product over w's packed
// copy with the avx512 kernels: a group of sixteen rows at a time against
// eight activation rows at a time (then four, two, one for the rest),
// the group's weights staying in L1/L2 meanwhile. A group cut by lo or hi
// is computed whole and stored through a lane mask. false means w has no
// packed copy and the caller must use another kernel.
func intRowsPacked(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool {
	p := packedOf(w)
	if p == nil || !haveAVX512 || w.Type != Q8_0 {
		return false
	}
	if lo >= hi || batch <= 0 {
		return true
	}
	nb := w.Cols / Q8Block
	rows := w.Rows
	xs := uintptr(nb) * unsafe.Sizeof(q8Act{})
	xa := act.q8[:batch*nb]
	_ = out[(batch-1)*rows+hi-1]
	ostride := uintptr(rows) * 4
	quant := uintptr(p.quant)
	for g := lo / packRows; g*packRows < hi; g++ {
		r0 := g * packRows
		mask := 1<<(min(hi, r0+packRows)-r0) - 1
		mask &^= 1<<(max(lo, r0)-r0) - 1
		grp := p.groupAt(g)
		for b := 0; b < batch; {
			x, o := unsafe.Pointer(&xa[b*nb]), &out[b*rows+r0]
			switch n := batch - b; {
			case n >= 8:
				q8_0p16x8(grp, quant, x, xs, nb, o, ostride, mask)
				b += 8
			case n >= 4:
				q8_0p16x4(grp, quant, x, xs, nb, o, ostride, mask)
				b += 4
			case n >= 2:
				q8_0p16x2(grp, quant, x, xs, nb, o, ostride, mask)
				b += 2
			default:
				q8_0p16x1(grp, quant, x, xs, nb, o, ostride, mask)
				b++
			}
		}
	}
	return true
}
