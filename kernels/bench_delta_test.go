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

// BenchmarkDeltaStepDRAM is DeltaStep over the states of 768 heads at dk
// = dv = 128 (48 MiB, the 32 heads x 24 layers a Qwen3.5-4B decode token
// advances), one head a call in turn, so that each state comes from
// memory rather than cache as in decode. ns/op is per head; GB/s counts
// one read and one write of the state (2*dk*dv*4 bytes a head), the
// memory traffic of the step: its second pass over a 64 KiB state finds
// it in L2, so doing each column block's two passes back to back (to keep
// it in L1) measured no faster here, the strided blocks streaming worse.
func BenchmarkDeltaStepDRAM(b *testing.B) {
	const dk, dv, heads = 128, 128, 768
	rng := rand.New(rand.NewPCG(5, 6))
	c := newDeltaCase(rng, dk, dv, 1, false)
	S := make([]float32, heads*dk*dv)
	for h := range heads {
		copy(S[h*dk*dv:], c.S[:dk*dv])
	}
	out := make([]float32, dv)
	for _, name := range Paths() {
		p, _ := parsePath(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(2 * dk * dv * 4)
			h := 0
			for b.Loop() {
				deltaStep(p, S[h*dk*dv:(h+1)*dk*dv], dk, dv, c.q, c.k, c.v, c.g[0], c.beta[0], out)
				if h++; h == heads {
					h = 0
				}
			}
		})
	}
}
