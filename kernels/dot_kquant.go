package kernels

// Products of one row of K-quant super-blocks (Q2_K ... Q6_K) with float32
// activations, read straight from the quantized bytes: each 16- or 32-weight
// sub-block's quants are summed against x (and x alone, for the types with
// a min), then scaled once by the sub-block's scale.

// q6Signed holds q-32 for the 6-bit quants of Q6_K.
var q6Signed [64]float32

func init() {
	for i := range q6Signed {
		q6Signed[i] = float32(i - 32)
	}
}

// dotQ2_K is the dot product of a row of Q2_K blocks with x.
func dotQ2_K(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 84 && len(x) >= QK_K; raw, x = raw[84:], x[QK_K:] {
		scales := (*[16]byte)(raw[0:16])
		d, dmin := half(raw[80:]), half(raw[82:])
		var sq, sm float32
		for s16, sc := range scales {
			h, shift, off := s16/8, uint(s16%8/2)*2, s16%2*16
			q := (*[16]byte)(raw[16+h*32+off:])
			xb := (*[16]float32)(x[s16*16:])
			var a0, a1, x0, x1 float32
			for l := 0; l < 16; l += 2 {
				a0 += qPlain[q[l]>>shift&3] * xb[l]
				a1 += qPlain[q[l+1]>>shift&3] * xb[l+1]
				x0 += xb[l]
				x1 += xb[l+1]
			}
			sq += float32(sc&15) * (a0 + a1)
			sm += float32(sc>>4) * (x0 + x1)
		}
		s += d*sq - dmin*sm
	}
	return s
}

// dotQ3_K is the dot product of a row of Q3_K blocks with x.
func dotQ3_K(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 110 && len(x) >= QK_K; raw, x = raw[110:], x[QK_K:] {
		hmask := (*[32]byte)(raw[0:32])
		sc := q3Scales(raw[96:108])
		var sq float32
		for s16 := range 16 {
			h, shift, off := s16/8, uint(s16%8/2)*2, s16%2*16
			q := (*[16]byte)(raw[32+h*32+off:])
			hm := (*[16]byte)(hmask[off:])
			bit := uint(s16 / 2)
			xb := (*[16]float32)(x[s16*16:])
			var a0, a1 float32
			for l := 0; l < 16; l += 2 {
				v0 := q[l]>>shift&3 | (hm[l]>>bit&1)<<2
				v1 := q[l+1]>>shift&3 | (hm[l+1]>>bit&1)<<2
				a0 += q3Value[v0&7] * xb[l]
				a1 += q3Value[v1&7] * xb[l+1]
			}
			sq += float32(sc[s16]) * (a0 + a1)
		}
		s += half(raw[108:]) * sq
	}
	return s
}

// q3Value maps a Q3_K weight's 2 low bits plus its hmask bit (as bit 2) to
// its value: the low bits, minus 4 when the hmask bit is clear.
var q3Value = [8]float32{-4, -3, -2, -1, 0, 1, 2, 3}

// dotQ4_K is the dot product of a row of Q4_K blocks with x.
func dotQ4_K(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 144 && len(x) >= QK_K; raw, x = raw[144:], x[QK_K:] {
		scales := (*[12]byte)(raw[4:16])
		var sq, sm float32
		for j := range 4 {
			q := (*[32]byte)(raw[16+j*32:])
			xa := (*[32]float32)(x[j*64:])
			xb := (*[32]float32)(x[j*64+32:])
			var a0, a1, b0, b1, xs0, xs1 float32
			for l := 0; l < 32; l += 2 {
				q0, q1 := q[l], q[l+1]
				a0 += qPlain[q0&15] * xa[l]
				a1 += qPlain[q1&15] * xa[l+1]
				b0 += qPlain[q0>>4] * xb[l]
				b1 += qPlain[q1>>4] * xb[l+1]
				xs0 += xa[l] + xa[l+1]
				xs1 += xb[l] + xb[l+1]
			}
			sc0, m0 := kScaleMin(scales, 2*j)
			sc1, m1 := kScaleMin(scales, 2*j+1)
			sq += float32(sc0)*(a0+a1) + float32(sc1)*(b0+b1)
			sm += float32(m0)*xs0 + float32(m1)*xs1
		}
		s += half(raw)*sq - half(raw[2:])*sm
	}
	return s
}

// dotQ5_K is the dot product of a row of Q5_K blocks with x.
func dotQ5_K(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 176 && len(x) >= QK_K; raw, x = raw[176:], x[QK_K:] {
		scales := (*[12]byte)(raw[4:16])
		qh := (*[32]byte)(raw[16:48])
		var sq, sm float32
		for j := range 4 {
			q := (*[32]byte)(raw[48+j*32:])
			xa := (*[32]float32)(x[j*64:])
			xb := (*[32]float32)(x[j*64+32:])
			ua, ub := uint(2*j), uint(2*j+1)
			var a0, a1, b0, b1, xs0, xs1 float32
			for l := 0; l < 32; l += 2 {
				q0, q1, h0, h1 := q[l], q[l+1], qh[l], qh[l+1]
				a0 += qPlain[(q0&15|h0>>ua<<4&16)&31] * xa[l]
				a1 += qPlain[(q1&15|h1>>ua<<4&16)&31] * xa[l+1]
				b0 += qPlain[(q0>>4|h0>>ub<<4&16)&31] * xb[l]
				b1 += qPlain[(q1>>4|h1>>ub<<4&16)&31] * xb[l+1]
				xs0 += xa[l] + xa[l+1]
				xs1 += xb[l] + xb[l+1]
			}
			sc0, m0 := kScaleMin(scales, 2*j)
			sc1, m1 := kScaleMin(scales, 2*j+1)
			sq += float32(sc0)*(a0+a1) + float32(sc1)*(b0+b1)
			sm += float32(m0)*xs0 + float32(m1)*xs1
		}
		s += half(raw)*sq - half(raw[2:])*sm
	}
	return s
}

// dotQ6_K is the dot product of a row of Q6_K blocks with x: per 128-weight
// half, 32 ql/qh byte positions each feed four weights 32 apart.
func dotQ6_K(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 210 && len(x) >= QK_K; raw, x = raw[210:], x[QK_K:] {
		scales := (*[16]byte)(raw[192:208])
		var sq float32
		for h := range 2 {
			ql := (*[64]byte)(raw[h*64:])
			qh := (*[32]byte)(raw[128+h*32:])
			xs := (*[128]float32)(x[h*128:])
			for half16 := range 2 {
				var a0, a1, a2, a3 float32
				for l := half16 * 16; l < half16*16+16; l++ {
					lo, hi, hb := ql[l], ql[l+32], qh[l]
					a0 += q6Signed[(lo&15|hb<<4&48)&63] * xs[l]
					a1 += q6Signed[(hi&15|hb<<2&48)&63] * xs[l+32]
					a2 += q6Signed[(lo>>4|hb&48)&63] * xs[l+64]
					a3 += q6Signed[(hi>>4|hb>>2&48)&63] * xs[l+96]
				}
				sc := scales[h*8+half16:]
				sq += float32(int8(sc[0]))*a0 + float32(int8(sc[2]))*a1 +
					float32(int8(sc[4]))*a2 + float32(int8(sc[6]))*a3
			}
		}
		s += half(raw[208:]) * sq
	}
	return s
}
