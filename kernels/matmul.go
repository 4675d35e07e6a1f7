package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// matMulRows computes the rows [lo,hi) of a product with float32
// activations (as a Pool with Options.FloatActivations does) on the
// calling goroutine, with the assembly kernels where the CPU has them. It panics, like an
// out-of-range index, when out, x or w's data are too short.
func matMulRows(out []float32, w *Matrix, x []float32, batch, lo, hi int) {
	if batch <= 0 || lo >= hi {
		return
	}
	checkMatMul(out, w, x, batch)
	if lo < 0 || hi > w.Rows {
		panic(fmt.Sprintf("kernels: rows [%d,%d) outside %d", lo, hi, w.Rows))
	}
	matMulRowsOn(best, out, w, x, nil, batch, lo, hi)
}

// checkMatMul panics when a product would read or write outside its slices;
// the assembly kernels trust these bounds.
func checkMatMul(out []float32, w *Matrix, x []float32, batch int) {
	if err := w.Validate(); err != nil {
		panic(err.Error())
	}
	if len(x) < batch*w.Cols {
		panic(fmt.Sprintf("kernels: x has %d values, need %d x %d", len(x), batch, w.Cols))
	}
	if len(out) < batch*w.Rows {
		panic(fmt.Sprintf("kernels: out has %d values, need %d x %d", len(out), batch, w.Rows))
	}
}

// matMulRowsGeneric is the pure-Go product: the reference the assembly is
// tested against and the path on CPUs without AVX2/FMA/F16C.
func matMulRowsGeneric(out []float32, w *Matrix, x []float32, batch, lo, hi int) {
	cols := w.Cols
	if w.Type == F32 {
		for r := lo; r < hi; r++ {
			row := w.F32[r*cols : (r+1)*cols]
			for b := range batch {
				out[b*w.Rows+r] = dotGeneric(row, x[b*cols:(b+1)*cols])
			}
		}
		return
	}
	dot := types[w.Type].dot
	if dot == nil {
		panic("kernels: unsupported matrix type " + w.Type.String())
	}
	rb := w.rowBytes()
	for r := lo; r < hi; r++ {
		raw := w.Raw[r*rb : (r+1)*rb]
		for b := range batch {
			out[b*w.Rows+r] = dot(raw, x[b*cols:(b+1)*cols])
		}
	}
}

// dotF16 is a row of F16 weights times x.
func dotF16(raw []byte, x []float32) float32 {
	var s float32
	for c := range x {
		s += HalfToFloat(binary.LittleEndian.Uint16(raw[2*c:])) * x[c]
	}
	return s
}

// dotQ8_0 is a row of Q8_0 blocks times x, each block's sum scaled once.
func dotQ8_0(raw []byte, x []float32) float32 {
	var s float32
	for k := range len(x) / Q8Block {
		blk := raw[k*Q8BlockBytes : (k+1)*Q8BlockBytes]
		d := HalfToFloat(binary.LittleEndian.Uint16(blk))
		xb := x[k*Q8Block : (k+1)*Q8Block]
		var bs float32
		for j, q := range blk[2:] {
			bs += float32(int8(q)) * xb[j]
		}
		s += d * bs
	}
	return s
}

// dotBF16 is the dot product of a row of bfloat16 weights with x.
func dotBF16(raw []byte, x []float32) float32 {
	var s0, s1 float32
	n := min(len(raw)/2, len(x)) &^ 1
	for i := 0; i < n; i += 2 {
		s0 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:]))<<16) * x[i]
		s1 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i+2:]))<<16) * x[i+1]
	}
	if n < len(x) && 2*n+2 <= len(raw) {
		s0 += math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*n:]))<<16) * x[n]
	}
	return s0 + s1
}

// q8Scale is the scale d of a Q8_0 block (its largest magnitude over 127)
// and 1/d, or 0 for an all-zero block, as ggml's quantize_row_q8_0 computes
// them.
func q8Scale(blk []float32) (d, id float32) {
	var amax float32
	for _, v := range blk {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d = amax / 127
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// QuantizeQ8 encodes src (a multiple of 32 values) as Q8_0 blocks, as
// ggml's quantize_row_q8_0 does, appending to dst.
func QuantizeQ8(dst []byte, src []float32) []byte {
	for k := 0; k+Q8Block <= len(src); k += Q8Block {
		blk := src[k : k+Q8Block]
		d, id := q8Scale(blk)
		dst = binary.LittleEndian.AppendUint16(dst, FloatToHalf(d))
		for _, v := range blk {
			dst = append(dst, byte(int8(math.Round(float64(v*id)))))
		}
	}
	return dst
}
