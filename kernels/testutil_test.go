package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// randMatrix builds a rows x cols matrix of type t with values in [-1,1).
func randMatrix(t testing.TB, rng *rand.Rand, typ DType, rows, cols int) *Matrix {
	t.Helper()
	m := &Matrix{Rows: rows, Cols: cols, Type: typ}
	vals := randVec(rng, rows*cols)
	switch typ {
	case F32:
		m.F32 = vals
	case F16:
		m.Raw = make([]byte, 0, 2*len(vals))
		for _, v := range vals {
			m.Raw = binary.LittleEndian.AppendUint16(m.Raw, FloatToHalf(v))
		}
	case Q8_0:
		m.Raw = QuantizeQ8(make([]byte, 0, rows*cols/Q8Block*Q8BlockBytes), vals)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

// absDots returns, for every output of MatMul, sum |w_i*x_i| computed in
// float64: the scale against which rounding differences are judged.
func absDots(w *Matrix, x []float32, batch int) []float64 {
	out := make([]float64, batch*w.Rows)
	for r := range w.Rows {
		row := dequantRow(w, r)
		for b := range batch {
			var s float64
			for c, v := range row {
				s += math.Abs(float64(v) * float64(x[b*w.Cols+c]))
			}
			out[b*w.Rows+r] = s
		}
	}
	return out
}

func dequantRow(w *Matrix, r int) []float32 {
	row := make([]float32, w.Cols)
	switch w.Type {
	case F32:
		copy(row, w.F32[r*w.Cols:])
	case F16:
		for c := range row {
			row[c] = HalfToFloat(binary.LittleEndian.Uint16(w.Raw[2*(r*w.Cols+c):]))
		}
	case Q8_0:
		rb := w.Cols / Q8Block * Q8BlockBytes
		raw := w.Raw[r*rb : (r+1)*rb]
		for c := range row {
			blk := raw[c/Q8Block*Q8BlockBytes:]
			row[c] = HalfToFloat(binary.LittleEndian.Uint16(blk)) * float32(int8(blk[2+c%Q8Block]))
		}
	}
	return row
}
