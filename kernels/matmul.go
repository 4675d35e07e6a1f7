package kernels

import (
	"encoding/binary"
	"math"
)

// MatMul computes out[b*w.Rows+r] = dot(w row r, x[b*w.Cols:(b+1)*w.Cols])
// for every batch row b in [0,batch), reading each weight once for all rows.
// The rows of w are spread over the pool's workers.
func (p *Pool) MatMul(out []float32, w *Matrix, x []float32, batch int) {
	p.Run(w.Rows, func(lo, hi int) { MatMulRows(out, w, x, batch, lo, hi) })
}

// MatMulRows computes the rows [lo,hi) of MatMul on the calling goroutine.
func MatMulRows(out []float32, w *Matrix, x []float32, batch, lo, hi int) {
	cols := w.Cols
	switch w.Type {
	case F32:
		for r := lo; r < hi; r++ {
			row := w.F32[r*cols : (r+1)*cols]
			for b := 0; b < batch; b++ {
				out[b*w.Rows+r] = Dot(row, x[b*cols:(b+1)*cols])
			}
		}
	case F16:
		for r := lo; r < hi; r++ {
			raw := w.Raw[r*cols*2 : (r+1)*cols*2]
			for b := 0; b < batch; b++ {
				xs := x[b*cols : (b+1)*cols]
				var s float32
				for c := range cols {
					s += HalfToFloat(binary.LittleEndian.Uint16(raw[2*c:])) * xs[c]
				}
				out[b*w.Rows+r] = s
			}
		}
	case Q8_0:
		nb := cols / Q8Block
		for r := lo; r < hi; r++ {
			raw := w.Raw[r*nb*Q8BlockBytes : (r+1)*nb*Q8BlockBytes]
			for b := 0; b < batch; b++ {
				xs := x[b*cols : (b+1)*cols]
				var s float32
				for k := range nb {
					blk := raw[k*Q8BlockBytes : (k+1)*Q8BlockBytes]
					d := HalfToFloat(binary.LittleEndian.Uint16(blk))
					var bs float32
					for j := range Q8Block {
						bs += float32(int8(blk[2+j])) * xs[k*Q8Block+j]
					}
					s += d * bs
				}
				out[b*w.Rows+r] = s
			}
		}
	default:
		panic("kernels: unsupported matrix type " + w.Type.String())
	}
}

// QuantizeQ8 encodes src (a multiple of 32 values) as Q8_0 blocks, as
// ggml's quantize_row_q8_0 does, appending to dst.
func QuantizeQ8(dst []byte, src []float32) []byte {
	for k := 0; k+Q8Block <= len(src); k += Q8Block {
		blk := src[k : k+Q8Block]
		var amax float32
		for _, v := range blk {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, FloatToHalf(d))
		for _, v := range blk {
			dst = append(dst, byte(int8(math.Round(float64(v*id)))))
		}
	}
	return dst
}
