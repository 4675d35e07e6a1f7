//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkFloatPacked compares, call by call on one goroutine, the avx512
// float products over the packed copy (floatRowsPacked) with the
// row-major ZMM tiles they replace (floatRowsZ) on the same matrix, for
// F32, F16 and BF16 on the stories110M projection shape (768x768) and a
// 7B-class one (4096x4096), one activation row (decode), eight (a batched
// step) and 64 (a prefill chunk). Alternating within one loop makes a
// shared machine's load slow both alike; it reports each one's GFLOP/s
// from its median time and the speed-up (row-major median / packed).
func BenchmarkFloatPacked(b *testing.B) {
	if !haveAVX512 {
		b.Skip("no AVX-512 F/BW/VL/VNNI on this CPU: both kernels are avx512 assembly")
	}
	for _, typ := range []DType{F32, F16, BF16} {
		for _, n := range []int{768, 4096} {
			for _, batch := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("%v/%dx%d/b%d", typ, n, n, batch), func(b *testing.B) {
					w := benchMatrix(b, typ, n, n)
					if packedOf(w) == nil {
						b.Fatal("Prepare made no packed copy")
					}
					x := randVec(rand.New(rand.NewPCG(1, 1)), batch*n)
					out := make([]float32, batch*n)
					var tRow, tPacked []time.Duration
					for b.Loop() {
						t0 := time.Now()
						floatRowsZ(out, w, x, batch, 0, n)
						t1 := time.Now()
						floatRowsPacked(out, w, x, batch, 0, n)
						tRow, tPacked = append(tRow, t1.Sub(t0)), append(tPacked, time.Since(t1))
					}
					flop := 2 * float64(n) * float64(n) * float64(batch)
					slices.Sort(tRow)
					slices.Sort(tPacked)
					mRow, mPacked := tRow[len(tRow)/2].Seconds(), tPacked[len(tPacked)/2].Seconds()
					b.ReportMetric(flop/mRow/1e9, "rowmajor-GFLOP/s")
					b.ReportMetric(flop/mPacked/1e9, "packed-GFLOP/s")
					b.ReportMetric(mRow/mPacked, "speedup")
				})
			}
		}
	}
}
