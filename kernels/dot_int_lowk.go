package kernels

// Integer-dot products of the low-bit K-quants (Q2_K, Q3_K) against
// 256-value activation blocks, in pure Go (the generic path on every
// CPU: they have no assembly yet). Their sub-blocks are 16 weights, the
// span of the activation's bsums, so a sub-block's offset term is its
// scale times one bsum.

// dotQ2_KInt is a row of Q2_K blocks (16 scale/min bytes, 64 bytes of
// 2-bit quants, d and dmin halves): per sub-block s, (sc_s & 15) times
// sum(q*x) and (sc_s >> 4) times bsum_s; d*dx*isum - dmin*dx*imin.
func dotQ2_KInt(raw []byte, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*84 : (k+1)*84]
		scales := (*[16]byte)(blk[0:16])
		a := &xa[k]
		var isum, imin int32
		for s16, sc := range scales {
			h, shift, off := s16/8, uint(s16%8/2)*2, s16%2*16
			q := (*[16]byte)(blk[16+h*32+off:])
			xs := (*[16]int8)(a.qs[s16*16:])
			var is int32
			for l, b := range q {
				is += int32(b>>shift&3) * int32(xs[l])
			}
			isum += int32(sc&15) * is
			imin += int32(sc>>4) * int32(a.bsums[s16])
		}
		s += half(blk[80:])*a.d*float32(isum) - half(blk[82:])*a.d*float32(imin)
	}
	return s
}

// dotQ3_KInt is a row of Q3_K blocks (32 bytes of high-bit mask, 64 of
// 2-bit quants, 12 of packed 6-bit scales, d): weight l of sub-block s is
// its 2 low bits minus 4 where its hmask bit is clear, times the signed
// scale; d*dx*isum.
func dotQ3_KInt(raw []byte, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*110 : (k+1)*110]
		hmask := (*[32]byte)(blk[0:32])
		sc := q3Scales(blk[96:108])
		a := &xa[k]
		var isum int32
		for s16 := range 16 {
			h, shift, off := s16/8, uint(s16%8/2)*2, s16%2*16
			q := (*[16]byte)(blk[32+h*32+off:])
			hm := (*[16]byte)(hmask[off:])
			bit := uint(s16 / 2)
			xs := (*[16]int8)(a.qs[s16*16:])
			var is int32
			for l, b := range q {
				v := int32(b>>shift&3) - 4*int32(hm[l]>>bit&1^1)
				is += v * int32(xs[l])
			}
			isum += int32(sc[s16]) * is
		}
		s += half(blk[108:]) * a.d * float32(isum)
	}
	return s
}
