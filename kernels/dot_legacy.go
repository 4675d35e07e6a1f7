package kernels

import "encoding/binary"

// Products of one row of 32-weight legacy blocks (Q4_0, Q4_1, Q5_0, Q5_1)
// with float32 activations, read straight from the quantized bytes: per
// block, the integer quants are looked up as floats and summed against x,
// then scaled once. raw is whole blocks and x holds at least as many values.

// Quant values as float32, looked up instead of converted: q-8 for Q4_0,
// q-16 for Q5_0, q for Q4_1 and Q5_1.
var (
	q4Signed [16]float32
	q5Signed [32]float32
	qPlain   [64]float32
)

func init() {
	for i := range q4Signed {
		q4Signed[i] = float32(i - 8)
	}
	for i := range q5Signed {
		q5Signed[i] = float32(i - 16)
	}
	for i := range qPlain {
		qPlain[i] = float32(i)
	}
}

// dotQ4_0 is the dot product of a row of Q4_0 blocks with x.
func dotQ4_0(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 18 && len(x) >= 32; raw, x = raw[18:], x[32:] {
		qs := (*[16]byte)(raw[2:18])
		xb := (*[32]float32)(x)
		var a0, a1, a2, a3 float32
		for j := 0; j < 16; j += 2 {
			q0, q1 := qs[j], qs[j+1]
			a0 += q4Signed[q0&15] * xb[j]
			a1 += q4Signed[q0>>4] * xb[j+16]
			a2 += q4Signed[q1&15] * xb[j+1]
			a3 += q4Signed[q1>>4] * xb[j+17]
		}
		s += half(raw) * ((a0 + a1) + (a2 + a3))
	}
	return s
}

// dotQ4_1 is the dot product of a row of Q4_1 blocks with x: per block
// d*sum(q*x) + m*sum(x).
func dotQ4_1(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 20 && len(x) >= 32; raw, x = raw[20:], x[32:] {
		qs := (*[16]byte)(raw[4:20])
		xb := (*[32]float32)(x)
		var a0, a1, x0, x1 float32
		for j, q := range qs {
			a0 += qPlain[q&15] * xb[j]
			a1 += qPlain[q>>4] * xb[j+16]
			x0 += xb[j]
			x1 += xb[j+16]
		}
		s += half(raw)*(a0+a1) + half(raw[2:])*(x0+x1)
	}
	return s
}

// dotQ5_0 is the dot product of a row of Q5_0 blocks with x.
func dotQ5_0(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 22 && len(x) >= 32; raw, x = raw[22:], x[32:] {
		qh := binary.LittleEndian.Uint32(raw[2:])
		qs := (*[16]byte)(raw[6:22])
		xb := (*[32]float32)(x)
		var a0, a1 float32
		for j, q := range qs {
			a0 += q5Signed[(uint32(q&15)|qh>>j<<4&16)&31] * xb[j]
			a1 += q5Signed[(uint32(q>>4)|qh>>(j+12)&16)&31] * xb[j+16]
		}
		s += half(raw) * (a0 + a1)
	}
	return s
}

// dotQ5_1 is the dot product of a row of Q5_1 blocks with x.
func dotQ5_1(raw []byte, x []float32) float32 {
	var s float32
	for ; len(raw) >= 24 && len(x) >= 32; raw, x = raw[24:], x[32:] {
		qh := binary.LittleEndian.Uint32(raw[4:])
		qs := (*[16]byte)(raw[8:24])
		xb := (*[32]float32)(x)
		var a0, a1, x0, x1 float32
		for j, q := range qs {
			a0 += qPlain[(uint32(q&15)|qh>>j<<4&16)&31] * xb[j]
			a1 += qPlain[(uint32(q>>4)|qh>>(j+12)&16)&31] * xb[j+16]
			x0 += xb[j]
			x1 += xb[j+16]
		}
		s += half(raw)*(a0+a1) + half(raw[2:])*(x0+x1)
	}
	return s
}
