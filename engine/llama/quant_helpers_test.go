package llama

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kiln-ai/kiln/kernels"
)

// blockHalves are the byte offsets of the half-precision scales and mins in
// one block of each quantized type (every other byte is quants or packed
// sub-block scales, valid whatever its value).
var blockHalves = map[kernels.DType][]int{
	kernels.Q4_0: {0}, kernels.Q4_1: {0, 2}, kernels.Q5_0: {0}, kernels.Q5_1: {0, 2},
	kernels.Q8_0: {0}, kernels.Q2_K: {80, 82}, kernels.Q3_K: {108},
	kernels.Q4_K: {0, 2}, kernels.Q5_K: {0, 2}, kernels.Q6_K: {208},
}

// randomQuantModel is m with every matrix replaced by random valid blocks
// of typ of the same shape (weights of order 0.01 to 0.1): a model for
// benchmarks and fuzz seeds of types this package cannot quantize to.
func randomQuantModel(tb testing.TB, m *Model, typ kernels.DType, seed uint64) *Model {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(typ)))
	conv := func(w *kernels.Matrix) kernels.Matrix {
		elems, size, ok := typ.Block()
		if !ok || w.Cols%elems != 0 {
			tb.Fatalf("cannot store a %dx%d matrix as %v", w.Rows, w.Cols, typ)
		}
		raw := make([]byte, w.Rows*w.Cols/elems*size)
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		for b := 0; b < len(raw); b += size {
			for _, off := range blockHalves[typ] {
				binary.LittleEndian.PutUint16(raw[b+off:], kernels.FloatToHalf((rng.Float32()*2-1)/256))
			}
		}
		if typ == kernels.BF16 {
			// Random bytes can be NaN, and masked ones subnormal (one
			// weight in a hundred, each a microcode assist in every
			// multiply-add on Intel cores): real weights, in (-1/16, 1/16).
			for i := 0; i < len(raw); i += 2 {
				binary.LittleEndian.PutUint16(raw[i:], uint16(math.Float32bits((rng.Float32()*2-1)/16)>>16))
			}
		}
		q := kernels.Matrix{Rows: w.Rows, Cols: w.Cols, Type: typ, Raw: raw}
		if err := q.Validate(); err != nil {
			tb.Fatal(err)
		}
		return q
	}
	out := mapMatrices(m, conv)
	if err := out.finish(nil); err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkDecodeQuant measures single-stream decode steps (batch 1, two
// workers) of a stories110M-shaped model stored in each quantized type
// (random valid blocks), as BenchmarkDecode does for F32/F16/Q8_0.
func BenchmarkDecodeQuant(b *testing.B) {
	c := benchShapes[2].config()
	c.SeqLen = 256
	for _, typ := range []kernels.DType{kernels.Q8_0, kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1,
		kernels.Q2_K, kernels.Q3_K, kernels.Q4_K, kernels.Q5_K, kernels.Q6_K, kernels.BF16} {
		b.Run(fmt.Sprintf("stories110M/%v/batch=1", typ), func(b *testing.B) {
			m := randomQuantModel(b, benchModel(b, benchShapes[2].name, c, benchShapes[2].untied), typ, 7)
			pool := kernels.NewPool(2)
			defer pool.Close()
			s := m.NewState(1, pool)
			logits := [][]float32{make([]float32, c.Vocab)}
			rows := []Row{{Pos: c.SeqLen - 1, Logits: true}}
			s.Forward(rows, logits)
			b.ReportAllocs()
			b.ResetTimer()
			pos := 0
			cpu0 := cpuTime()
			for b.Loop() {
				rows[0] = Row{Pos: pos, Token: pos * 7 % c.Vocab, Logits: true}
				s.Forward(rows, logits)
				pos = (pos + 1) % c.SeqLen
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/sec, "tok/s")
			b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "tok/cpu-s")
			b.ReportMetric(float64(m.StepBytes())*float64(b.N)/sec/1e9, "GB/s")
		})
	}
}
