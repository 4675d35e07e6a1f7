package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// benchMatrices caches the large benchmark weights: building a 4096x4096
// matrix costs more than a benchmark run.
var (
	benchMu       sync.Mutex
	benchMatrices = map[string]*Matrix{}
)

func benchMatrix(b *testing.B, typ DType, rows, cols int) *Matrix {
	benchMu.Lock()
	defer benchMu.Unlock()
	key := fmt.Sprintf("%v/%dx%d", typ, rows, cols)
	if m, ok := benchMatrices[key]; ok {
		return m
	}
	m := randMatrix(b, rand.New(rand.NewPCG(uint64(rows), uint64(cols))), typ, rows, cols)
	benchMatrices[key] = m
	return m
}

// BenchmarkMatMul measures products of the engine's shapes: 4096x4096 (a
// 7B-class layer) with one vector and a batch of 16, and the stories15M
// shapes (dim 288, hidden 768, vocab 32000). "ref" is the pure-Go reference
// on the same pool. MB/s counts weight bytes; GFLOP/s counts 2*rows*cols*batch.
func BenchmarkMatMul(b *testing.B) {
	shapes := []struct{ rows, cols, batch int }{
		{4096, 4096, 1}, {4096, 4096, 16},
		{288, 288, 1}, {768, 288, 1}, {32000, 288, 1}, {768, 288, 16},
	}
	for _, typ := range []DType{F32, Q8_0, F16} {
		for _, s := range shapes {
			for _, workers := range []int{1, 2} {
				for _, impl := range []string{"asm", "ref"} {
					if impl == "ref" && s.rows == 4096 && s.batch == 16 {
						continue // minutes per run
					}
					name := fmt.Sprintf("%v/%dx%d/b%d/w%d/%s", typ, s.rows, s.cols, s.batch, workers, impl)
					b.Run(name, func(b *testing.B) {
						benchMatMul(b, typ, s.rows, s.cols, s.batch, workers, impl == "ref")
					})
				}
			}
		}
	}
}

func benchMatMul(b *testing.B, typ DType, rows, cols, batch, workers int, ref bool) {
	w := benchMatrix(b, typ, rows, cols)
	rng := rand.New(rand.NewPCG(1, 1))
	x := randVec(rng, batch*cols)
	out := make([]float32, batch*rows)
	p := NewPool(workers)
	defer p.Close()
	refRows := func(lo, hi int) { matMulRowsGeneric(out, w, x, batch, lo, hi) }
	b.SetBytes(int64(w.Bytes()))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if ref {
			p.Run(rows, refRows)
		} else {
			p.MatMul(out, w, x, batch)
		}
	}
	b.ReportMetric(2*float64(rows)*float64(cols)*float64(batch)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkPoolDispatch is the cost of waking the workers for an empty
// product and waiting for them: the floor under every parallel MatMul.
func BenchmarkPoolDispatch(b *testing.B) {
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("w%d", workers), func(b *testing.B) {
			p := NewPool(workers)
			defer p.Close()
			fn := func(lo, hi int) {}
			b.ReportAllocs()
			for b.Loop() {
				p.Run(workers, fn)
			}
		})
	}
}

func BenchmarkElementwise(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	x4096 := randVec(rng, 4096)
	y4096 := randVec(rng, 4096)
	w4096 := randVec(rng, 4096)
	out := make([]float32, 4096)
	logits0, logits := scaled(randVec(rng, 32000), 10), make([]float32, 32000)
	h0, h := scaled(randVec(rng, 11008), 4), make([]float32, 11008)
	g := randVec(rng, 11008)
	var sink float32
	cases := []struct {
		name  string
		bytes int
		fn    func()
	}{
		{"Dot/4096", 2 * 4 * 4096, func() { sink += Dot(x4096, y4096) }},
		{"Dot/4096/ref", 2 * 4 * 4096, func() { sink += dotGeneric(x4096, y4096) }},
		{"Axpy/4096", 2 * 4 * 4096, func() { Axpy(1e-9, x4096, out) }},
		{"Axpy/4096/ref", 2 * 4 * 4096, func() { axpyGeneric(1e-9, x4096, out) }},
		{"RMSNorm/4096", 2 * 4 * 4096, func() { RMSNorm(out, x4096, w4096, 1e-5) }},
		// The in-place ops restart from fresh inputs each time (the copy is
		// part of the measured time): repeated SiLU would drift into
		// subnormals and measure those instead.
		{"Softmax/32000", 4 * 32000, func() { copy(logits, logits0); Softmax(logits) }},
		{"Softmax/32000/ref", 4 * 32000, func() { copy(logits, logits0); softmaxScalar(logits) }},
		{"Softmax/32000/mathexp-ref", 4 * 32000, func() { copy(logits, logits0); softmaxMathExp(logits) }},
		{"SiLU/11008", 4 * 11008, func() { copy(h, h0); SiLU(h) }},
		{"SiLU/11008/ref", 4 * 11008, func() { copy(h, h0); siluGeneric(h) }},
		{"SwiGLU/11008", 2 * 4 * 11008, func() { copy(h, h0); SwiGLU(h, g) }},
		{"SwiGLU/11008/ref", 2 * 4 * 11008, func() { copy(h, h0); swigluGeneric(h, g) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(c.bytes))
			b.ReportAllocs()
			for b.Loop() {
				c.fn()
			}
		})
	}
	_ = sink
}

func scaled(v []float32, k float32) []float32 {
	for i := range v {
		v[i] *= k
	}
	return v
}

// softmaxScalar is Softmax with the scalar float32 exp (the non-AVX2 path).
func softmaxScalar(x []float32) {
	maxv := slices.Max(x)
	inv := 1 / expSubSumGeneric(x, maxv)
	for i := range x {
		x[i] *= inv
	}
}

// softmaxMathExp is the original float64-exp Softmax, kept as a baseline.
func softmaxMathExp(x []float32) {
	maxv := slices.Max(x)
	var sum float32
	for i, v := range x {
		e := float32(math.Exp(float64(v - maxv)))
		x[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range x {
		x[i] *= inv
	}
}
