package kernels

// packedRowsGo is the product of rows [lo,hi) over packed weights in plain
// Go, lane by lane as the assembly computes it: the reference the packing
// is tested against on every machine (the avx512 kernels are tested
// against the row-major products on the machines that have them). Its
// integer sums are the row-major products' (exact, whatever the order)
// and its float operations are dot_int.go's, in the same order.
func packedRowsGo(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) {
	p := packedOf(w)
	tr := &types[w.Type]
	nb := w.Cols / tr.elems
	for r := lo; r < hi; r++ {
		g, i := r/packRows, r%packRows
		grp := p.data[g*p.group : (g+1)*p.group]
		for b := range batch {
			if tr.act == actQ8K {
				out[b*w.Rows+r] = tr.packedDotK(grp, i, act.q8k[b*nb:(b+1)*nb])
			} else {
				out[b*w.Rows+r] = tr.packedDot(grp, p.quant, i, act.q8[b*nb:(b+1)*nb])
			}
		}
	}
}

// packedQ8_0Lane is lane i of a packed Q8_0 group (its quants quant bytes
// on) against one activation row: the quants are stored plus 128.
func packedQ8_0Lane(grp []byte, quant, i int, xa []q8Act) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		qs := grp[quant+k*Q8Block*packRows:]
		is := -128 * a.sum
		for q := range Q8Block / 4 {
			for j := range 4 {
				is += int32(qs[64*q+4*i+j]) * int32(a.qs[4*q+j])
			}
		}
		s += float32(is) * (half(grp[k*2*packRows+2*i:]) * a.d)
	}
	return s
}

// lane is lane i of a packed group of l's type (its quants quant bytes
// on) against one activation row.
func (l nibbleLayout) lane(grp []byte, quant, i int, xa []q8Act) float32 {
	lanes := types[l.typ].lanes
	var s float32
	for k := range xa {
		a := &xa[k]
		qs := grp[quant+k*lanes.quants:]
		is := -l.offset * a.sum
		for v := range Q8Block {
			is += int32(packedNibble(qs, l.qh >= 0, i, v)) * int32(a.qs[v])
		}
		sc := grp[k*lanes.scales:]
		if l.min {
			s += float32(is)*(half(sc[2*i:])*a.d) + half(sc[32+2*i:])*(float32(a.sum)*a.d)
		} else {
			s += float32(is) * (half(sc[2*i:]) * a.d)
		}
	}
	return s
}

// packedNibble is the unsigned quant of value v (0..31) of lane i in a
// packed nibble block qs, its fifth bit added when five.
func packedNibble(qs []byte, five bool, i, v int) byte {
	q, j := v%16/4, v%4
	b := qs[64*q+4*i+j]
	bit := q
	if v < 16 {
		b &= 15
	} else {
		b >>= 4
		bit += 4
	}
	if five {
		b |= qs[256+4*i+j] >> bit & 1 << 4
	}
	return b
}

// packedQ4_KLane is lane i of a packed Q4_K group against one activation
// row: per half sub-block (16 weights, four columns), the nibbles' sum
// (it fits an int16: 16*15*127) times the sub-block's scale, as the
// kernels' VPDPWSSD takes it; the mins against the activation's sums of
// 16 as ordered pairs, one VPDPWSSD a sub-block.
func packedQ4_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q4KPackBlock : (k+1)*q4KPackBlock]
		var isum int32
		for j := range 4 {
			sc0, sc1 := int32(blk[64+16*(2*j)+i]), int32(blk[64+16*(2*j+1)+i])
			for h := range 2 {
				var lo, hi int32
				for c := 4 * h; c < 4*h+4; c++ {
					for t := range 4 {
						q := blk[320+64*(8*j+c)+4*i+t]
						lo += int32(q&15) * int32(a.qs[64*j+4*c+t])
						hi += int32(q>>4) * int32(a.qs[64*j+32+4*c+t])
					}
				}
				isum += sc0*lo + sc1*hi
			}
		}
		s += kDminTerms(blk, i, a, isum)
	}
	return s
}

// kDminTerms is a packed Q4_K or Q5_K super-block's contribution to lane
// i, given its scaled sum isum: d*dx*isum less dmin*dx times the mins
// against the activation's sums of 16, in dot_int.go's order.
func kDminTerms(blk []byte, i int, a *q8KAct, isum int32) float32 {
	var imin int32
	for s := range 8 {
		imin += int32(blk[192+16*s+i]) * (int32(a.bsums[2*s]) + int32(a.bsums[2*s+1]))
	}
	return half(blk[2*i:])*a.d*float32(isum) - half(blk[32+2*i:])*a.d*float32(imin)
}

// packedQ5_KLane is lane i of a packed Q5_K group against one activation
// row: per sub-block (32 weights of 0..31: its sum needs 17 bits), the sum
// of q*x times the scale in int32, as the kernels' VPMULLD; the mins as
// Q4_K's.
func packedQ5_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q5KPackBlock : (k+1)*q5KPackBlock]
		var isum int32
		for j := range 4 {
			var lo, hi int32
			for c := range 8 {
				for t := range 4 {
					q, h := blk[832+64*(8*j+c)+4*i+t], blk[320+64*c+4*i+t]
					lo += int32(q&15|h>>j&16) * int32(a.qs[64*j+4*c+t])
					hi += int32(q>>4|h<<(4-j)&16) * int32(a.qs[64*j+32+4*c+t])
				}
			}
			isum += int32(blk[64+16*(2*j)+i])*lo + int32(blk[64+16*(2*j+1)+i])*hi
		}
		s += kDminTerms(blk, i, a, isum)
	}
	return s
}

// packedQ6_KLane is lane i of a packed Q6_K group against one activation
// row: per sub-block of 16, the sum of q*x starting from -32 times the
// activation's sum (so that it is the sum of (q-32)*x), times the scale.
func packedQ6_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q6KPackBlock : (k+1)*q6KPackBlock]
		var isum int32
		for sb := range 16 {
			qs := blk[320+192*sb:]
			is := -32 * int32(a.bsums[sb])
			for t := range 4 {
				b0, b1, b2 := qs[4*i+t], qs[64+4*i+t], qs[128+4*i+t]
				w3 := b0>>6 | b1>>6<<2 | b2>>6<<4
				x := a.qs[16*sb+t:]
				is += int32(b0&63)*int32(x[0]) + int32(b1&63)*int32(x[4]) + int32(b2&63)*int32(x[8]) + int32(w3)*int32(x[12])
			}
			isum += int32(int8(blk[16*sb+i])) * is
		}
		s += half(blk[256+2*i:]) * a.d * float32(isum)
	}
	return s
}

// packedQ3_KLane is lane i of a packed Q3_K group against one activation
// row: per sub-block of 16, the sum of q*x starting from -4 times the
// activation's sum (so that it is the sum of (q-4)*x, at most 8128 in
// magnitude: the kernels' VPDPWSSD takes it as a word), times the scale;
// d gathered from the scale bytes' low bits.
func packedQ3_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q3KPackBlock : (k+1)*q3KPackBlock]
		var isum int32
		var d uint16
		for sb := range 16 {
			b := blk[16*sb+i]
			if sb < 8 {
				d = d<<2 | uint16(b&3)
			}
			qs := blk[256+192*(sb/2):]
			is := -4 * int32(a.bsums[sb])
			for t := range 4 {
				s0, s1, s2 := qs[4*i+t], qs[64+4*i+t], qs[128+4*i+t]
				w := [8]byte{s0 & 7, s0 >> 3 & 7, s1 & 7, s1 >> 3 & 7, s2 & 7, s2 >> 3 & 7,
					s0>>6 | s2>>6&1<<2, s1>>6 | s2>>7<<2}
				x := a.qs[16*sb+t:]
				for j := range 4 {
					is += int32(w[4*(sb%2)+j]) * int32(x[4*j])
				}
			}
			isum += int32(int8(b)>>2) * is
		}
		s += HalfToFloat(d) * a.d * float32(isum)
	}
	return s
}

// packedQ2_KLane is lane i of a packed Q2_K group against one activation
// row: per sub-block, the sum of q*x times the scale, the mins against
// the activation's sums of 16, in the reference's order (the kernels'
// int sum, four times this one, converts to the same float times d/4).
func packedQ2_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q2KPackBlock : (k+1)*q2KPackBlock]
		var isum, imin int32
		for sb := range 16 {
			b := blk[32*(sb/2)+2*i+sb%2]
			qs := blk[320+256*(sb/4):]
			var v int32
			for j := range 4 {
				for t := range 4 {
					q := qs[64*j+4*i+t] >> (2 * uint(sb%4)) & 3
					v += int32(q) * int32(a.qs[16*sb+4*j+t])
				}
			}
			isum += int32(b>>4) * v
			imin += int32(b&15) * int32(a.bsums[sb])
		}
		s += half(blk[256+2*i:])*a.d*float32(isum) - half(blk[288+2*i:])*a.d*float32(imin)
	}
	return s
}
