//go:build amd64 && !purego

package kernels

import "unsafe"

// Implemented in intpack_amd64.s: the products of one packed Q8_0 group of
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

// Implemented in intpack_k_amd64.s: the same for a packed Q4_K, Q5_K or
// Q6_K group of nb super-blocks against q8KAct activation rows.
//
//go:noescape
func q4_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q4_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q4_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q4_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q5_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q5_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q5_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q5_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q6_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q6_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q6_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

//go:noescape
func q6_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)

// packedKernel selects the assembly of a packed weight type; a direct
// call in a switch (not a func value) as intKernel does.
type packedKernel DType

// call runs the kernel for n (1, 2, 4 or 8) activation rows.
func (k packedKernel) call(n int, grp unsafe.Pointer, quant uintptr, x unsafe.Pointer, xs uintptr, nb int, o *float32, ostride uintptr, mask int) {
	switch DType(k) {
	case Q8_0:
		switch n {
		case 8:
			q8_0p16x8(grp, quant, x, xs, nb, o, ostride, mask)
		case 4:
			q8_0p16x4(grp, quant, x, xs, nb, o, ostride, mask)
		case 2:
			q8_0p16x2(grp, quant, x, xs, nb, o, ostride, mask)
		default:
			q8_0p16x1(grp, quant, x, xs, nb, o, ostride, mask)
		}
	case Q4_K:
		switch n {
		case 8:
			q4_Kp16x8(grp, x, xs, nb, o, ostride, mask)
		case 4:
			q4_Kp16x4(grp, x, xs, nb, o, ostride, mask)
		case 2:
			q4_Kp16x2(grp, x, xs, nb, o, ostride, mask)
		default:
			q4_Kp16x1(grp, x, xs, nb, o, ostride, mask)
		}
	case Q5_K:
		switch n {
		case 8:
			q5_Kp16x8(grp, x, xs, nb, o, ostride, mask)
		case 4:
			q5_Kp16x4(grp, x, xs, nb, o, ostride, mask)
		case 2:
			q5_Kp16x2(grp, x, xs, nb, o, ostride, mask)
		default:
			q5_Kp16x1(grp, x, xs, nb, o, ostride, mask)
		}
	case Q6_K:
		switch n {
		case 8:
			q6_Kp16x8(grp, x, xs, nb, o, ostride, mask)
		case 4:
			q6_Kp16x4(grp, x, xs, nb, o, ostride, mask)
		case 2:
			q6_Kp16x2(grp, x, xs, nb, o, ostride, mask)
		default:
			q6_Kp16x1(grp, x, xs, nb, o, ostride, mask)
		}
	}
}

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
	kern := packedKernel(w.Type)
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
			n := 1
			switch m := batch - b; {
			case m >= 8:
				n = 8
			case m >= 4:
				n = 4
			case m >= 2:
				n = 2
			}
			kern.call(n, grp, quant, unsafe.Add(xa0, uintptr(b)*xs), xs, nb, &out[b*rows+r0], ostride, mask)
			b += n
		}
	}
	return true
}
