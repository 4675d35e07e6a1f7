//go:build amd64 && !purego

package kernels

import "unsafe"

// Implemented in intpack_vnni_amd64.s: the products of eight rows of one
// packed Q8_0 group (the half whose scales start at w and whose quants
// start quant bytes on) with n = 1, 2 or 4 activation rows of nb q8Act
// blocks from xa, xs bytes apart; activation row j's eight sums go to
// out + j*ostride bytes, the lanes whose mask word has its sign bit set.
//
//go:noescape
func q8_0p8v1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask *[8]int32)

//go:noescape
func q8_0p8v2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask *[8]int32)

//go:noescape
func q8_0p8v4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask *[8]int32)

// intRowsPackedVNNI is intRowsPacked for the avxvnni path: each half of a
// packed Q8_0 group (eight rows) against four activation rows at a time
// (then two, one). false means w has no packed Q8_0 copy.
func intRowsPackedVNNI(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool {
	p := packedOf(w)
	if p == nil || !haveAVXVNNI || w.Type != Q8_0 {
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
	var mask [8]int32
	for r0 := lo &^ 7; r0 < hi; r0 += 8 {
		for i := range mask {
			mask[i] = 0
			if r := r0 + i; r >= lo && r < hi {
				mask[i] = -1
			}
		}
		g, half := r0/packRows, uintptr(r0%packRows/8)
		// The half's scales are 16 bytes into each block's 32, its quants
		// 32 bytes into each 64-byte column: quant bytes past sc.
		sc := unsafe.Add(p.groupAt(g), 16*half)
		quant := uintptr(p.quant) + 16*half
		for b := 0; b < batch; {
			x, o := unsafe.Pointer(&xa[b*nb]), &out[b*rows+r0]
			switch n := batch - b; {
			case n >= 4:
				q8_0p8v4(sc, quant, x, xs, nb, o, ostride, &mask)
				b += 4
			case n >= 2:
				q8_0p8v2(sc, quant, x, xs, nb, o, ostride, &mask)
				b += 2
			default:
				q8_0p8v1(sc, quant, x, xs, nb, o, ostride, &mask)
				b++
			}
		}
	}
	return true
}
