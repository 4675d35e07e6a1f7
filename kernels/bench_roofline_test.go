package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkRooflineBandwidth measures the read bandwidth the products can
// reach: a float32 buffer summed by Dot, split over 1 and 2 workers of a
// Pool, as a decode step streams its weights; 256 MiB is beyond any L3
// (memory bandwidth), 16 MiB fits the L3 of most servers (a model that
// small is bound by the cache, not memory). GB/s is the roofline's
// bandwidth (BENCHMARKS.md): bytes per token over it bound the tokens per
// second of a bandwidth-bound row.
func BenchmarkRooflineBandwidth(b *testing.B) {
	for _, mib := range []int{256, 16} {
		buf := make([]float32, mib<<18)
		for i := range buf {
			buf[i] = float32(i & 7)
		}
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dMiB/w%d", mib, workers), func(b *testing.B) { benchBandwidth(b, buf, workers) })
		}
	}
}

func benchBandwidth(b *testing.B, buf []float32, workers int) {
	pool := NewPool(workers)
	defer pool.Close()
	const part = 1 << 18 // floats per Run part: 1 MiB
	sums := make([]float32, len(buf)/part)
	fn := func(lo, hi int) {
		for p := lo; p < hi; p++ {
			sums[p] = Dot(buf[p*part:(p+1)*part], buf[p*part:(p+1)*part])
		}
	}
	b.SetBytes(int64(4 * len(buf)))
	for b.Loop() {
		pool.Run(len(buf)/part, fn)
	}
}
