package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DequantRow writes row r of w as float32 into dst[:w.Cols], for every
// supported type. The values are exactly those of ggml's dequantize_row_*
// (and gguf-py's numpy dequantizers): each is computed with the same
// float32 operations in the same order. It panics, like an out-of-range
// index, when w is invalid, r is outside it or dst is too short.
func DequantRow(dst []float32, w *Matrix, r int) {
	if err := w.Validate(); err != nil {
		panic(err.Error())
	}
	if r < 0 || r >= w.Rows {
		panic(fmt.Sprintf("kernels: row %d outside %d", r, w.Rows))
	}
	cols := w.Cols
	dst = dst[:cols]
	if w.Type == F32 {
		copy(dst, w.F32[r*cols:(r+1)*cols])
		return
	}
	rb := w.rowBytes()
	raw := w.Raw[r*rb : (r+1)*rb]
	switch w.Type {
	case F16:
		for i := range dst {
			dst[i] = HalfToFloat(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	default:
		l := layouts[w.Type]
		deq := blockDequant[w.Type]
		for k := range cols / l.elems {
			deq(dst[k*l.elems:(k+1)*l.elems], raw[k*l.bytes:(k+1)*l.bytes])
		}
	}
}

// blockDequant decodes one block of a quantized type into len(dst) values.
var blockDequant = [...]func(dst []float32, blk []byte){
	Q4_0: dequantQ4_0,
	Q4_1: dequantQ4_1,
	Q5_0: dequantQ5_0,
	Q5_1: dequantQ5_1,
	Q8_0: dequantQ8_0,
	Q2_K: dequantQ2_K,
	Q3_K: dequantQ3_K,
	Q4_K: dequantQ4_K,
	Q5_K: dequantQ5_K,
	Q6_K: dequantQ6_K,
}

// half reads the little-endian IEEE half at b[0:2].
func half(b []byte) float32 { return HalfToFloat(binary.LittleEndian.Uint16(b)) }

// The legacy 32-weight blocks (ggml's block_q4_0 ... block_q8_0). Weight j
// of a 4-bit block is the low nibble of qs[j] for j < 16 and the high nibble
// of qs[j-16] otherwise; a 5-bit block adds bit j of the little-endian
// uint32 qh as bit 4.

// dequantQ4_0: d (half), qs[16]; w = d * (q - 8).
func dequantQ4_0(dst []float32, blk []byte) {
	d := half(blk)
	qs := (*[16]byte)(blk[2:18])
	y := (*[32]float32)(dst)
	for j, q := range qs {
		y[j] = d * float32(int(q&15)-8)
		y[j+16] = d * float32(int(q>>4)-8)
	}
}

// dequantQ4_1: d, m (halves), qs[16]; w = d*q + m.
func dequantQ4_1(dst []float32, blk []byte) {
	d, m := half(blk), half(blk[2:])
	qs := (*[16]byte)(blk[4:20])
	y := (*[32]float32)(dst)
	for j, q := range qs {
		y[j] = float32(d*float32(q&15)) + m
		y[j+16] = float32(d*float32(q>>4)) + m
	}
}

// dequantQ5_0: d (half), qh (uint32), qs[16]; w = d * (q - 16).
func dequantQ5_0(dst []float32, blk []byte) {
	d := half(blk)
	qh := binary.LittleEndian.Uint32(blk[2:])
	qs := (*[16]byte)(blk[6:22])
	y := (*[32]float32)(dst)
	for j, q := range qs {
		lo := int(q&15) | int(qh>>j&1)<<4
		hi := int(q>>4) | int(qh>>(j+16)&1)<<4
		y[j] = d * float32(lo-16)
		y[j+16] = d * float32(hi-16)
	}
}

// dequantQ5_1: d, m (halves), qh (uint32), qs[16]; w = d*q + m.
func dequantQ5_1(dst []float32, blk []byte) {
	d, m := half(blk), half(blk[2:])
	qh := binary.LittleEndian.Uint32(blk[4:])
	qs := (*[16]byte)(blk[8:24])
	y := (*[32]float32)(dst)
	for j, q := range qs {
		lo := uint32(q&15) | (qh>>j&1)<<4
		hi := uint32(q>>4) | (qh>>(j+16)&1)<<4
		y[j] = float32(d*float32(lo)) + m
		y[j+16] = float32(d*float32(hi)) + m
	}
}

// dequantQ8_0: d (half), qs[32] int8; w = d * q.
func dequantQ8_0(dst []float32, blk []byte) {
	d := half(blk)
	qs := (*[32]byte)(blk[2:34])
	y := (*[32]float32)(dst)
	for j, q := range qs {
		y[j] = d * float32(int8(q))
	}
}
