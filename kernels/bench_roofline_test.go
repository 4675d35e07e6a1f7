package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkRooflineBandwidth measures the memory read bandwidth the
// products can reach: a 256 MiB float32 buffer (beyond any L3) summed by
// Dot, split over 1 and 2 workers of a Pool, as a decode step streams its
// weights. GB/s is the roofline's bandwidth (BENCHMARKS.md): bytes per
// token over it bound the tokens per second of any bandwidth-bound row.
func BenchmarkRooflineBandwidth(b *testing.B) {
	buf := make([]float32, 64<<20)
	for i := range buf {
		buf[i] = float32(i & 7)
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("w%d", workers), func(b *testing.B) {
			pool := NewPool(workers)
			defer pool.Close()
			sums := make([]float32, workers)
			const part = 1 << 20 // floats per Run part
			fn := func(lo, hi int) {
				var s float32
				for p := lo; p < hi; p++ {
					s += Dot(buf[p*part:(p+1)*part], buf[p*part:(p+1)*part])
				}
				sums[lo*workers/(len(buf)/part)] += s
			}
			b.SetBytes(int64(4 * len(buf)))
			for b.Loop() {
				pool.Run(len(buf)/part, fn)
			}
		})
	}
}
