//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkAttn4Paths compares, call by call in one loop, the AVX2 and
// the AVX-512 forms of a prefill chunk's attention for four query rows
// (scores against n cached keys, then the weighted values) on the
// stories heads (48 and 64 columns) and a 7B-class one (128), n = 64
// positions, keys and values 3 heads apart as in a KV cache. It reports
// each form's median ns per call and the speed-up.
func BenchmarkAttn4Paths(b *testing.B) {
	if !haveAVX512 {
		b.Skip("no AVX-512 F/BW/VL/VNNI on this CPU")
	}
	for _, hs := range []int{48, 64, 128} {
		for _, part := range []string{"scores", "values"} {
			b.Run(fmt.Sprintf("%s/hs=%d/n=64", part, hs), func(b *testing.B) {
				const n = 64
				rng := rand.New(rand.NewPCG(7, 8))
				stride := 3 * hs
				kv := randVec(rng, n*stride)
				a := randVec(rng, 4*n)
				var rows [4]unsafe.Pointer
				for r := range rows {
					rows[r] = unsafe.Pointer(&randVec(rng, hs)[0])
				}
				out := make([]float32, 4*n)
				avx2 := func() {
					if part == "scores" {
						attnScores4AVX(&rows, &out[0], &kv[0], 4*stride, hs, n)
					} else {
						attnValues4AVX(&rows, &a[0], &kv[0], 4*stride, hs, n)
					}
				}
				z := func() {
					if part == "scores" {
						attnScores4Z(&rows, &out[0], &kv[0], 4*stride, hs, n)
						return
					}
					for col := 0; col < hs; col += 64 {
						switch min(hs-col, 64) / 16 {
						case 4:
							attnValues4Z4(&rows, &a[0], &kv[0], 4*stride, col, n)
						case 3:
							attnValues4Z3(&rows, &a[0], &kv[0], 4*stride, col, n)
						}
					}
				}
				var tOld, tNew []time.Duration
				for b.Loop() {
					t0 := time.Now()
					avx2()
					t1 := time.Now()
					z()
					tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
				}
				mo, mn := medianDuration(tOld), medianDuration(tNew)
				b.ReportMetric(float64(mo.Nanoseconds()), "avx2-ns")
				b.ReportMetric(float64(mn.Nanoseconds()), "avx512-ns")
				b.ReportMetric(mo.Seconds()/mn.Seconds(), "speedup")
			})
		}
	}
}

func medianDuration(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
