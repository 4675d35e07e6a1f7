package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkPackedPaths compares, call by call on one worker, the integer
// products of every path this CPU runs on the stories110M projection
// shape (768x768) and a 7B-class one (4096x4096), for one activation row
// (decode), eight (a batched step) and 64 (a prefill chunk); activation
// quantization included. Alternating the paths within one loop makes a
// shared, noisy machine slow them alike; it reports each path's median
// GFLOP/s and the fastest path's speed-up over avx2.
func BenchmarkPackedPaths(b *testing.B) {
	for _, typ := range intTypes {
		if !packable(typ) {
			continue
		}
		for _, n := range []int{768, 4096} {
			for _, batch := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("%v/%dx%d/b%d", typ, n, n, batch), func(b *testing.B) {
					benchPackedPaths(b, typ, n, batch)
				})
			}
		}
	}
}

func benchPackedPaths(b *testing.B, typ DType, n, batch int) {
	w := benchMatrix(b, typ, n, n)
	x := randVec(rand.New(rand.NewPCG(1, 1)), batch*n)
	out := make([]float32, batch*n)
	paths := Paths()
	paths = paths[:len(paths)-1] // the pure-Go one would take the whole run
	pools := make([]*Pool, len(paths))
	for i, p := range paths {
		var err error
		if pools[i], err = NewPoolOpts(1, Options{Path: p}); err != nil {
			b.Fatal(err)
		}
		defer pools[i].Close()
	}
	times := make([][]time.Duration, len(paths))
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range pools {
			t0 := time.Now()
			p.MatMul(out, w, x, batch)
			times[i] = append(times[i], time.Since(t0))
		}
	}
	flop := 2 * float64(n) * float64(n) * float64(batch)
	median := make([]float64, len(paths))
	for i, p := range paths {
		slices.Sort(times[i])
		median[i] = times[i][len(times[i])/2].Seconds()
		b.ReportMetric(flop/median[i]/1e9, p+"-GFLOP/s")
	}
	if i := slices.Index(paths, "avx2"); i > 0 {
		b.ReportMetric(median[i]/median[0], paths[0]+"/avx2")
	}
}
