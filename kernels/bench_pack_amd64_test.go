//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkPackedVsAVX2 compares, product by product in one loop on one
// worker, the avx512 kernels over a prepared matrix's packed copy with the
// avx2 kernels over its row-major blocks, for each packed type: a
// stories110M-sized layer (768x768) against one activation row (decode)
// and a 64-row prompt chunk, and a 7B-sized one (4096x4096) against one
// and eight. Alternating makes a loaded machine slow both alike; it
// reports each one's GFLOP/s from the median product time and the speed-up.
func BenchmarkPackedVsAVX2(b *testing.B) {
	if !haveAVX512 {
		b.Skip("no AVX-512 F/BW/VL/VNNI on this CPU")
	}
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0, Q4_1, Q5_1} {
		for _, s := range []struct{ n, batch int }{{768, 1}, {768, 64}, {4096, 1}, {4096, 8}} {
			b.Run(fmt.Sprintf("%v/%dx%d/b%d", typ, s.n, s.n, s.batch), func(b *testing.B) {
				benchPackedVsAVX2(b, typ, s.n, s.batch)
			})
		}
	}
}

func benchPackedVsAVX2(b *testing.B, typ DType, n, batch int) {
	w := benchMatrix(b, typ, n, n)
	if w.PackedBytes() == 0 {
		b.Fatalf("%v has no packed copy", typ)
	}
	x := randVec(rand.New(rand.NewPCG(1, 1)), batch*n)
	out := make([]float32, batch*n)
	pools := make([]*Pool, 2)
	for i, path := range []string{"avx2", "avx512"} {
		p, err := NewPoolOpts(1, Options{Path: path})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		pools[i] = p
	}
	b.ReportAllocs()
	var tOld, tNew []time.Duration
	for b.Loop() {
		t0 := time.Now()
		pools[0].MatMul(out, w, x, batch)
		t1 := time.Now()
		pools[1].MatMul(out, w, x, batch)
		tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
	}
	reportTiles(b, 2*n*n*batch, tOld, tNew)
}
