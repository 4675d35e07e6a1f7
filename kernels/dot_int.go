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
		a := &xa[k]
		var is int32
		for j, q := range blk[2:] {
			is += int32(int8(q)) * int32(a.qs[j])
		}
		s += float32(is) * (half(blk) * a.d)
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
		var is int32
		for j, q := range qs {
			is += (int32(q&15)-8)*int32(a.qs[j]) + (int32(q>>4)-8)*int32(a.qs[j+16])
		}
		s += float32(is) * (half(blk) * a.d)
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
			var lo, hi int32
			for l, b := range q {
				lo += int32(b&15) * int32(a.qs[64*j+l])
				hi += int32(b>>4) * int32(a.qs[64*j+32+l])
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
			ua, ub := uint(2*j), uint(2*j+1)
			var lo, hi int32
			for l, b := range q {
				lo += int32(b&15|qh[l]>>ua<<4&16) * int32(a.qs[64*j+l])
				hi += int32(b>>4|qh[l]>>ub<<4&16) * int32(a.qs[64*j+32+l])
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
func dotQ6_KInt(raw []byte, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*210 : (k+1)*210]
		ql := (*[128]byte)(blk[0:128])
		qh := (*[64]byte)(blk[128:192])
		scales := (*[16]byte)(blk[192:208])
		a := &xa[k]
		var isum int32
		for sb := range 16 {
			h, kk, l0 := sb/8, sb%8/2, sb%2*16
			lo := ql[h*64+kk%2*32:]
			shift := uint(kk/2) * 4
			e0 := h*128 + kk*32
			var is int32
			for l := l0; l < l0+16; l++ {
				q := int32(lo[l]>>shift&15 | (qh[h*32+l]>>(2*uint(kk))&3)<<4)
				is += q * int32(a.qs[e0+l])
			}
			isum += int32(int8(scales[sb])) * (is - 32*int32(a.bsums[(e0+l0)/16]))
		}
		s += half(blk[208:]) * a.d * float32(isum)
	}
	return s
}

// intDotsQ8 and intDotsQ8K hold the integer row products by weight type.
var (
	intDotsQ8 = [...]func(raw []byte, xa []q8Act) float32{
		Q4_0: dotQ4_0Int, Q5_0: dotQ5_0Int, Q8_0: dotQ8_0Int,
	}
	intDotsQ8K = [...]func(raw []byte, xa []q8KAct) float32{
		Q4_K: dotQ4_KInt, Q5_K: dotQ5_KInt, Q6_K: dotQ6_KInt,
	}
)
