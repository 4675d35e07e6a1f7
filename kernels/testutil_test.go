package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
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
	case BF16:
		m.Raw = make([]byte, 0, 2*len(vals))
		for _, v := range vals {
			m.Raw = binary.LittleEndian.AppendUint16(m.Raw, uint16(math.Float32bits(v)>>16))
		}
	default:
		m.Raw = randBlocks(rng, typ, rows*cols)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	Prepare(m) // as a model loader does: the avx512 path then reads the packed copy
	return m
}

// rowMajorCopy is w with its weights copied to new memory: the same
// values without Prepare's packed copy, so that the products read the
// rows.
func rowMajorCopy(w *Matrix) *Matrix {
	cp := *w
	cp.F32, cp.Raw = slices.Clone(w.F32), slices.Clone(w.Raw)
	cp.pk = nil
	return &cp
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
	DequantRow(row, w, r)
	return row
}

// halfFields are the byte offsets of the half-precision scales and mins in
// one block of each quantized type; every other byte is quants or packed
// sub-block scales, valid whatever its value.
var halfFields = map[DType][]int{
	Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2},
	Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208},
}

// randBlocks is n weights of the quantized type typ: random bytes, with
// every half scale and min a random value of magnitude below 1/32, so the
// weights stay of order 1.
func randBlocks(rng *rand.Rand, typ DType, n int) []byte {
	elems, size, _ := typ.Block()
	raw := make([]byte, n/elems*size)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	for b := 0; b < len(raw); b += size {
		for _, off := range halfFields[typ] {
			binary.LittleEndian.PutUint16(raw[b+off:], FloatToHalf((rng.Float32()*2-1)/32))
		}
	}
	return raw
}

// quantTypes are the types whose float-activation products run in Go only
// (no assembly), and BF16.
var quantTypes = []DType{Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, BF16}
