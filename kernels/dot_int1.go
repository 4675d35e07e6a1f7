package kernels

import "encoding/binary"

// Integer-dot products of the legacy types with an offset (Q4_1, Q5_1:
// weight = d*q + m, q unsigned) against 32-value activation blocks, in
// pure Go: the generic path and the reference of the assembly. Per block,
// d_w*d_x times the exact integer sum of q*x_q, plus m_w times the block's
// activation sum d_x*sum(x_q), as ggml's vec_dot_q4_1_q8_1 combines them.

// dotQ4_1Int is a row of Q4_1 blocks (d, m halves, 16 bytes of nibbles).
func dotQ4_1Int(raw []byte, xa []q8Act) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*20 : (k+1)*20]
		qs := (*[16]byte)(blk[4:])
		a := &xa[k]
		var i0, i1 int32
		for j, q := range qs {
			i0 += int32(q&15) * int32(a.qs[j])
			i1 += int32(q>>4) * int32(a.qs[j+16])
		}
		s += float32(i0+i1)*(half(blk)*a.d) + half(blk[2:])*(float32(a.sum)*a.d)
	}
	return s
}

// dotQ5_1Int is a row of Q5_1 blocks (d, m halves, 32 bits of fifth bits,
// 16 bytes of nibbles): weight j's quant is nibble j | qh bit j << 4.
func dotQ5_1Int(raw []byte, xa []q8Act) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*24 : (k+1)*24]
		qh := binary.LittleEndian.Uint32(blk[4:])
		qs := (*[16]byte)(blk[8:])
		a := &xa[k]
		var is int32
		for j, q := range qs {
			lo := int32(q&15) | int32(qh>>j&1)<<4
			hi := int32(q>>4) | int32(qh>>(j+16)&1)<<4
			is += lo*int32(a.qs[j]) + hi*int32(a.qs[j+16])
		}
		s += float32(is)*(half(blk)*a.d) + half(blk[2:])*(float32(a.sum)*a.d)
	}
	return s
}
