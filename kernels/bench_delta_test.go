package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkDeltaStep is one decode token of one head at dk = dv = 128 on
// every path; GB/s counts the state's traffic, read twice and written
// once (3*dk*dv*4 bytes a call).
func BenchmarkDeltaStep(b *testing.B) {
	const dk, dv = 128, 128
	c := newDeltaCase(rand.New(rand.NewPCG(1, 2)), dk, dv, 1, false)
	out := make([]float32, dv)
	for _, name := range Paths() {
		p, _ := parsePath(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(3 * dk * dv * 4)
			for b.Loop() {
				deltaStep(p, c.S, dk, dv, c.q, c.k, c.v, c.g[0], c.beta[0], out)
			}
		})
	}
}

// BenchmarkDeltaChunk is a prefill of n tokens of one head at dk = dv =
// 128 on every path, in ns a token (to set beside DeltaStep's ns/op).
func BenchmarkDeltaChunk(b *testing.B) {
	const dk, dv = 128, 128
	for _, n := range []int{64, 512} {
		c := newDeltaCase(rand.New(rand.NewPCG(3, 4)), dk, dv, n, false)
		out := make([]float32, n*dv)
		scratch := make([]float32, DeltaChunkScratch(n, dk, dv))
		for _, name := range Paths() {
			p, _ := parsePath(name)
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					deltaChunk(p, c.S, dk, dv, n, c.q, c.k, c.v, c.g, c.beta, out, scratch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/token")
			})
		}
	}
}
