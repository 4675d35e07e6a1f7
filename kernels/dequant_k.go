package kernels

// The K-quant super-blocks of 256 weights (ggml's block_q2_K ... q6_K),
// made of 16-weight (Q2_K, Q3_K, Q6_K) or 32-weight (Q4_K, Q5_K) sub-blocks
// with their own scales. Weight e of the 2-bit planes (Q2_K, Q3_K low bits)
// sits in byte (e/128)*32 + e%32 at bit shift 2*((e%128)/32); Q6_K's low
// nibbles in byte (e/128)*64 + e%64 (low nibble for e%128 < 64, else high).

// dequantQ2_K: scales[16] (low nibble scale, high nibble min), qs[64],
// d, dmin (halves); w = d*sc*q - dmin*m per 16 weights.
func dequantQ2_K(dst []float32, blk []byte) {
	scales := (*[16]byte)(blk[0:16])
	qs := (*[64]byte)(blk[16:80])
	d, dmin := half(blk[80:]), half(blk[82:])
	y := (*[QK_K]float32)(dst)
	for s, sc := range scales {
		dl := d * float32(sc&15)
		ml := dmin * float32(sc>>4)
		h, shift, off := s/8, uint(s%8/2)*2, s%2*16
		for l := range 16 {
			q := qs[h*32+off+l] >> shift & 3
			y[s*16+l] = float32(dl*float32(q)) - ml
		}
	}
}

// q3Scales unpacks Q3_K's twelve scale bytes into 16 signed 6-bit scales:
// the low nibbles come from bytes 0..7, the two high bits from bytes 8..11.
func q3Scales(b []byte) (sc [16]int8) {
	p := (*[12]byte)(b)
	for j := range 16 {
		lo := p[j%8] >> (4 * uint(j/8)) & 15
		hi := p[8+j%4] >> (2 * uint(j/4)) & 3
		sc[j] = int8(lo|hi<<4) - 32
	}
	return sc
}

// dequantQ3_K: hmask[32], qs[64], scales[12], d (half); w = d*sc*q with
// q the 2-bit value minus 4 where the hmask bit e/32 of byte e%32 is clear.
func dequantQ3_K(dst []float32, blk []byte) {
	hmask := (*[32]byte)(blk[0:32])
	qs := (*[64]byte)(blk[32:96])
	sc := q3Scales(blk[96:108])
	d := half(blk[108:])
	y := (*[QK_K]float32)(dst)
	for s := range 16 {
		dl := d * float32(sc[s])
		h, shift, off := s/8, uint(s%8/2)*2, s%2*16
		bit := uint(s / 2)
		for l := range 16 {
			q := int(qs[h*32+off+l]>>shift&3) - 4*int(hmask[off+l]>>bit&1^1)
			y[s*16+l] = dl * float32(q)
		}
	}
}

// kScaleMin unpacks sub-block j's 6-bit scale and min from the twelve
// packed bytes of Q4_K and Q5_K (ggml's get_scale_min_k4).
func kScaleMin(p *[12]byte, j int) (sc, m uint8) {
	if j < 4 {
		return p[j] & 63, p[j+4] & 63
	}
	return p[j+4]&15 | p[j-4]>>6<<4, p[j+4]>>4 | p[j]>>6<<4
}

// dequantQ4_K: d, dmin (halves), scales[12], qs[128]; sub-block s of 32
// weights is the low (s even) or high nibble of qs[(s/2)*32 ...];
// w = d*sc*q - dmin*m.
func dequantQ4_K(dst []float32, blk []byte) {
	d, dmin := half(blk), half(blk[2:])
	scales := (*[12]byte)(blk[4:16])
	qs := (*[128]byte)(blk[16:144])
	y := (*[QK_K]float32)(dst)
	for s := range 8 {
		sc, m := kScaleMin(scales, s)
		dl, ml := d*float32(sc), dmin*float32(m)
		q := (*[32]byte)(qs[s/2*32:])
		shift := uint(s%2) * 4
		for l := range 32 {
			y[s*32+l] = float32(dl*float32(q[l]>>shift&15)) - ml
		}
	}
}

// dequantQ5_K: as Q4_K plus qh[32] after the scales: bit s of qh[l] is bit
// 4 of weight l of sub-block s.
func dequantQ5_K(dst []float32, blk []byte) {
	d, dmin := half(blk), half(blk[2:])
	scales := (*[12]byte)(blk[4:16])
	qh := (*[32]byte)(blk[16:48])
	qs := (*[128]byte)(blk[48:176])
	y := (*[QK_K]float32)(dst)
	for s := range 8 {
		sc, m := kScaleMin(scales, s)
		dl, ml := d*float32(sc), dmin*float32(m)
		q := (*[32]byte)(qs[s/2*32:])
		shift := uint(s%2) * 4
		for l := range 32 {
			v := q[l]>>shift&15 | (qh[l]>>uint(s)&1)<<4
			y[s*32+l] = float32(dl*float32(v)) - ml
		}
	}
}

// dequantQ6_K: ql[128], qh[64], scales[16] int8, d (half). Weight e =
// h*128 + 32*k + l (k < 4) takes its low nibble from ql[h*64 + (k%2)*32 + l]
// (k >= 2: high nibble) and bits 4-5 from qh[h*32+l] >> 2k; w = d*sc*(q-32).
func dequantQ6_K(dst []float32, blk []byte) {
	ql := (*[128]byte)(blk[0:128])
	qh := (*[64]byte)(blk[128:192])
	scales := (*[16]byte)(blk[192:208])
	d := half(blk[208:])
	y := (*[QK_K]float32)(dst)
	for s := range 16 {
		dl := d * float32(int8(scales[s]))
		h, k, l0 := s/8, s%8/2, s%2*16
		lo := ql[h*64+k%2*32:]
		shift := uint(k/2) * 4
		for l := l0; l < l0+16; l++ {
			q := int(lo[l]>>shift&15|(qh[h*32+l]>>(2*uint(k))&3)<<4) - 32
			y[h*128+k*32+l] = dl * float32(q)
		}
	}
}
