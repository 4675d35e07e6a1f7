//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkPacked compares, call by call in one loop on one goroutine, the
// avx512 kernels over packed weights (intRowsPacked) with the avx2
// kernels over the row-major blocks (intRowsArch) they replace, on the
// same matrix and activations: 4096 columns, 4096 rows for one activation
// row (a decode step: the weights stream from memory) and 512 rows for 64
// (a prefill chunk: each group meets every row while in cache).
// Alternating makes a loaded machine slow both alike; it reports each
// one's GFLOP/s from the median time per call and the speed-up.
func BenchmarkPacked(b *testing.B) {
	if !haveAVX512 {
		b.Skip("no AVX-512 VNNI on this CPU")
	}
	for _, typ := range []DType{Q8_0, Q4_K, Q5_K, Q6_K} {
		for _, batch := range []int{1, 64} {
			rows := 4096
			if batch > 1 {
				rows = 512
			}
			b.Run(fmt.Sprintf("%v/%dx4096/b%d", typ, rows, batch), func(b *testing.B) {
				benchPacked(b, typ, rows, 4096, batch)
			})
		}
	}
}

func benchPacked(b *testing.B, typ DType, rows, cols, batch int) {
	rng := rand.New(rand.NewPCG(7, 8))
	w := randMatrix(b, rng, typ, rows, cols)
	var act quantAct
	act.fill(pathAVX512, intFormat(typ), randVec(rng, batch*cols), batch, cols)
	out := make([]float32, batch*rows)
	var tOld, tNew []time.Duration
	for b.Loop() {
		t0 := time.Now()
		intRowsArch(out, w, &act, batch, 0, rows)
		t1 := time.Now()
		intRowsPacked(out, w, &act, batch, 0, rows)
		tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
	}
	reportTiles(b, 2*rows*cols*batch, tOld, tNew)
}
