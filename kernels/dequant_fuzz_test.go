package kernels

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzDequantRow builds a matrix of any type code and shape from arbitrary
// bytes. Validate must refuse every size that does not match the type's
// block layout; for one it accepts, DequantRow and matMulRows must run
// without panicking, and for the types without a per-block min (whose
// weights are exactly scale times quant, so that no cancellation hides
// inside a weight) wherever the weights and the product are finite, the
// block product must equal the float64 dot of the DequantRow values to
// float32 rounding.
func FuzzDequantRow(f *testing.F) {
	for _, typ := range Types() {
		elems, size, _ := typ.Block()
		seed := make([]byte, 2*size)
		for i := range seed {
			seed[i] = byte(i * 37)
		}
		for _, off := range halfFields[typ] {
			binary.LittleEndian.PutUint16(seed[off:], FloatToHalf(0.01))
			binary.LittleEndian.PutUint16(seed[size+off:], FloatToHalf(-0.02))
		}
		f.Add(uint8(typ), uint8(2), uint16(elems), seed)
	}
	f.Add(uint8(Q4_K), uint8(1), uint16(255), make([]byte, 144))
	f.Add(uint8(Q6_K), uint8(3), uint16(256), make([]byte, 420))
	f.Fuzz(func(t *testing.T, code, rows uint8, cols uint16, raw []byte) {
		w := &Matrix{Rows: int(rows), Cols: int(cols), Type: DType(code), Raw: raw}
		elems, size, ok := w.Type.Block()
		if w.Type == F32 {
			w.F32 = make([]float32, len(raw)/4)
			w.Raw = nil
		}
		err := w.Validate()
		switch {
		case !ok || w.Type == F32:
			if err == nil && !ok {
				t.Fatalf("unsupported type %v validated", w.Type)
			}
			return
		case rows == 0 || cols == 0 || int(cols)%elems != 0 || len(raw) != int(rows)*int(cols)/elems*size:
			if err == nil {
				t.Fatalf("%v %dx%d with %d bytes validated", w.Type, rows, cols, len(raw))
			}
			return
		case err != nil:
			t.Fatalf("%v %dx%d with %d bytes refused: %v", w.Type, rows, cols, len(raw), err)
		}
		x := make([]float32, w.Cols)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		out := make([]float32, w.Rows)
		matMulRows(out, w, x, 1, 0, w.Rows)
		row := make([]float32, w.Cols)
		for r := range w.Rows {
			DequantRow(row, w, r)
			var want, scale float64
			finite := !math.IsNaN(float64(out[r])) && !math.IsInf(float64(out[r]), 0)
			for c, v := range row {
				finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
				want += float64(v) * float64(x[c])
				scale += math.Abs(float64(v) * float64(x[c]))
			}
			if finite && !hasMin[w.Type] && scale < 1e30 && math.Abs(float64(out[r])-want) > 1e-5*scale+1e-30 {
				t.Fatalf("%v row %d: product %v, dequantized dot %v (scale %g)", w.Type, r, out[r], want, scale)
			}
		}
	})
}

// hasMin marks the types whose weights are d*q + m or d*sc*q - dmin*m: their
// products differ from the dequantized dot by rounding relative to the two
// terms, which may both be far larger than the weight.
var hasMin = map[DType]bool{Q4_1: true, Q5_1: true, Q2_K: true, Q4_K: true, Q5_K: true}
