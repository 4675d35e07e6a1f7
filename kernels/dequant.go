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
	tr := &types[w.Type]
	if tr.elems == 1 {
		tr.dequant(dst, raw)
		return
	}
	for k := range cols / tr.elems {
		tr.dequant(dst[k*tr.elems:(k+1)*tr.elems], raw[k*tr.bytes:(k+1)*tr.bytes])
	}
}

// dequantF16 decodes len(dst) IEEE halves.
func dequantF16(dst []float32, raw []byte) {
	for i := range dst {
		dst[i] = HalfToFloat(binary.LittleEndian.Uint16(raw[2*i:]))
	}
}

// dequantBF16 decodes len(dst) bfloat16 values.
func dequantBF16(dst []float32, raw []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
	}
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
