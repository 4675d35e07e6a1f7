package kernels

import "encoding/binary"

// Integer-dot products of one weight row with one quantized activation row
// (actquant.go), in pure Go: the generic path's products and the reference
// the assembly is tested against. Each block's integer sum is exact; it is
// scaled once by the weight's and the activation's scales, in ggml's order.

// dotQ8_0Int is a row of Q8_0 blocks times 32-value activation blocks.
func dotQ8_0Int(raw []byte, xa []q8Act) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*Q8BlockBytes : (k+1)*Q8BlockBytes]
		qs := (*[Q8Block]byte)(blk[2:])
		a := &xa[k]
		var i0, i1 int32
		for j := 0; j < Q8Block; j += 2 {
			i0 += int32(int8(qs[j])) * int32(a.qs[j])
			i1 += int32(int8(qs[j+1])) * int32(a.qs[j+1])
		}
		s += float32(i0+i1) * (half(blk) * a.d)
	}
	return s
}

// dotQ4_0Int is a row of Q4_0 blocks times 32-value activation blocks:
// weight j is (nibble - 8).
func dotQ4_0Int(raw []byte, xa []q8Act) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*18 : (k+1)*18]
		qs := (*[16]byte)(blk[2:])
		a := &xa[k]
		var i0, i1 int32
		for j := range 16 {
			q := qs[j]
			i0 += (int32(q&15) - 8) * int32(a.qs[j])
			i1 += (int32(q>>4) - 8) * int32(a.qs[j+16])
		}
		s += float32(i0+i1) * (half(blk) * a.d)
	}
	return s
}

// dotQ5_0Int is a row of Q5_0 blocks times 32-value activation blocks:
// weight j is (nibble | qh bit j << 4) - 16.
func dotQ5_0Int(raw []byte, xa []q8Act) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*22 : (k+1)*22]
		qh := binary.LittleEndian.Uint32(blk[2:])
		qs := (*[16]byte)(blk[6:])
		a := &xa[k]
		var is int32
		for j, q := range qs {
			lo := int32(q&15) | int32(qh>>j&1)<<4
			hi := int32(q>>4) | int32(qh>>(j+16)&1)<<4
			is += (lo-16)*int32(a.qs[j]) + (hi-16)*int32(a.qs[j+16])
		}
		s += float32(is) * (half(blk) * a.d)
	}
	return s
}

// dotQ4_KInt is a row of Q4_K blocks times 256-value activation blocks:
// per 32-weight sub-block s, sc_s*sum(q*x) in integers, and the mins
// against the activation's block sums: d*dx*isum - dmin*dx*imin.
func dotQ4_KInt(raw []byte, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*144 : (k+1)*144]
		scales := (*[12]byte)(blk[4:16])
		a := &xa[k]
		var isum, imin int32
		for j := range 4 {
			q := (*[32]byte)(blk[16+j*32:])
			xl, xh := (*[32]int8)(a.qs[64*j:]), (*[32]int8)(a.qs[64*j+32:])
			var lo, hi int32
			for l := range 32 {
				b := q[l]
				lo += int32(b&15) * int32(xl[l])
				hi += int32(b>>4) * int32(xh[l])
			}
			sc0, m0 := kScaleMin(scales, 2*j)
			sc1, m1 := kScaleMin(scales, 2*j+1)
			isum += int32(sc0)*lo + int32(sc1)*hi
			imin += int32(m0)*int32(a.bsums[4*j]+a.bsums[4*j+1]) + int32(m1)*int32(a.bsums[4*j+2]+a.bsums[4*j+3])
		}
		s += half(blk)*a.d*float32(isum) - half(blk[2:])*a.d*float32(imin)
	}
	return s
}

// dotQ5_KInt is dotQ4_KInt with Q5_K's fifth bit from qh.
func dotQ5_KInt(raw []byte, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*176 : (k+1)*176]
		scales := (*[12]byte)(blk[4:16])
		qh := (*[32]byte)(blk[16:48])
		a := &xa[k]
		var isum, imin int32
		for j := range 4 {
			q := (*[32]byte)(blk[48+j*32:])
			xl, xh := (*[32]int8)(a.qs[64*j:]), (*[32]int8)(a.qs[64*j+32:])
			ua, ub := uint(2*j), uint(2*j+1)
			var lo, hi int32
			for l := range 32 {
				b, h := q[l], qh[l]
				lo += int32(b&15|h>>ua<<4&16) * int32(xl[l])
				hi += int32(b>>4|h>>ub<<4&16) * int32(xh[l])
			}
			sc0, m0 := kScaleMin(scales, 2*j)
			sc1, m1 := kScaleMin(scales, 2*j+1)
			isum += int32(sc0)*lo + int32(sc1)*hi
			imin += int32(m0)*int32(a.bsums[4*j]+a.bsums[4*j+1]) + int32(m1)*int32(a.bsums[4*j+2]+a.bsums[4*j+3])
		}
		s += half(blk)*a.d*float32(isum) - half(blk[2:])*a.d*float32(imin)
	}
	return s
}

// dotQ6_KInt is a row of Q6_K blocks times 256-value activation blocks:
// per 16-weight sub-block s, sc_s*(sum(q*x) - 32*bsum_s) with q in 0..63.
// As in dotQ6_K, per 128-weight half, 32 ql/qh byte positions each feed
// four weights 32 apart (sub-blocks 2 apart).
func dotQ6_KInt(raw []byte, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*210 : (k+1)*210]
		scales := (*[16]byte)(blk[192:208])
		a := &xa[k]
		var isum int32
		for h := range 2 {
			ql := (*[64]byte)(blk[h*64:])
			qh := (*[32]byte)(blk[128+h*32:])
			xs := (*[128]int8)(a.qs[h*128:])
			for half16 := range 2 {
				var a0, a1, a2, a3 int32
				for l := half16 * 16; l < half16*16+16; l++ {
					lo, hi, hb := ql[l], ql[l+32], qh[l]
					a0 += int32(lo&15|hb<<4&48) * int32(xs[l])
					a1 += int32(hi&15|hb<<2&48) * int32(xs[l+32])
					a2 += int32(lo>>4|hb&48) * int32(xs[l+64])
					a3 += int32(hi>>4|hb>>2&48) * int32(xs[l+96])
				}
				sb := h*8 + half16
				sc, bs := (*[7]byte)(scales[sb:]), (*[7]int16)(a.bsums[sb:])
				isum += int32(int8(sc[0]))*(a0-32*int32(bs[0])) + int32(int8(sc[2]))*(a1-32*int32(bs[2])) +
					int32(int8(sc[4]))*(a2-32*int32(bs[4])) + int32(int8(sc[6]))*(a3-32*int32(bs[6]))
			}
		}
		s += half(blk[208:]) * a.d * float32(isum)
	}
	return s
}
