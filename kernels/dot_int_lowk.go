package kernels

// Integer-dot products of the low-bit K-quants (Q2_K, Q3_K) against
// 256-value activation blocks, in pure Go: the generic path's, and the
// reference of the avx2 and avxvnni paths' assembly (intdot_k_amd64.s,
// intdot_kx2_amd64.s: the same integer sums); avx512 and amx read both
// types' matrices packed (intpack_k_amd64.s). Their sub-blocks are 16 weights, the
// span of the activation's bsums, so a sub-block's offset term is its
// scale times one bsum.
//
// Layout: each half h of a block holds 32 quant bytes whose four 2-bit
// fields (shift 2j) are the weights of sub-blocks 8h+2j (bytes 0-15) and
// 8h+2j+1 (bytes 16-31); field j of byte l is weight 128h+32j+l. Reading
// each byte once with constant shifts feeds eight sub-block sums.

// lowKSums returns the eight sub-block sums (index 2j + l/16) of one half
// of 2-bit fields q against the half's activations x (128 values).
func lowKSums(q *[32]byte, x *[128]int8) (s [8]int32) {
	for l := range 16 {
		b := q[l]
		s[0] += int32(b&3) * int32(x[l])
		s[2] += int32(b>>2&3) * int32(x[32+l])
		s[4] += int32(b>>4&3) * int32(x[64+l])
		s[6] += int32(b>>6) * int32(x[96+l])
	}
	for l := 16; l < 32; l++ {
		b := q[l]
		s[1] += int32(b&3) * int32(x[l])
		s[3] += int32(b>>2&3) * int32(x[32+l])
		s[5] += int32(b>>4&3) * int32(x[64+l])
		s[7] += int32(b>>6) * int32(x[96+l])
	}
	return s
}

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
		for h := range 2 {
			sums := lowKSums((*[32]byte)(blk[16+h*32:]), (*[128]int8)(a.qs[h*128:]))
			for i, v := range sums {
				sc := scales[h*8+i]
				isum += int32(sc&15) * v
				imin += int32(sc>>4) * int32(a.bsums[h*8+i])
			}
		}
		s += half(blk[80:])*a.d*float32(isum) - half(blk[82:])*a.d*float32(imin)
	}
	return s
}

// dotQ3_KInt is a row of Q3_K blocks (32 bytes of high-bit mask, 64 of
// 2-bit quants, 12 of packed 6-bit scales, d): weight l of sub-block s is
// its 2 low bits and its hmask bit as bit 2, minus 4, times the signed
// scale: sc_s*(sum(q*x) - 4*bsum_s) with q in 0..7; d*dx*isum.
func dotQ3_KInt(raw []byte, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		blk := raw[k*110 : (k+1)*110]
		hmask := (*[32]byte)(blk[0:32])
		sc := q3Scales(blk[96:108])
		a := &xa[k]
		var isum int32
		for h := range 2 {
			sums := q3Sums((*[32]byte)(blk[32+h*32:]), hmask, uint(4*h), (*[128]int8)(a.qs[h*128:]))
			for i, v := range sums {
				isum += int32(sc[h*8+i]) * (v - 4*int32(a.bsums[h*8+i]))
			}
		}
		s += half(blk[108:]) * a.d * float32(isum)
	}
	return s
}

// q3Sums is lowKSums for Q3_K: field j of byte l gets bit sh+j of hm[l]
// as its bit 2.
func q3Sums(q, hm *[32]byte, sh uint, x *[128]int8) (s [8]int32) {
	for l := range 32 {
		b, m := q[l], hm[l]>>sh
		i := l >> 4
		s[i] += int32(b&3|m<<2&4) * int32(x[l])
		s[2+i] += int32(b>>2&3|m<<1&4) * int32(x[32+l])
		s[4+i] += int32(b>>4&3|m&4) * int32(x[64+l])
		s[6+i] += int32(b>>6|m>>1&4) * int32(x[96+l])
	}
	return s
}
