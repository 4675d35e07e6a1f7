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

// BenchmarkTiles compares, call by call in one loop, the multi-row tiles
// with the tiles they replace on the same L1-resident data: four weight
// rows against six activation rows, F32 (1024 columns: three 4x2 calls
// against two 4x3) and the 32-value integer types (4096 columns: six
// one-row calls against three two-row ones). Alternating within one loop
// makes a loaded machine slow both alike; it reports each one's GFLOP/s
// from the median time per iteration (robust to the preemptions of a
// shared machine) and the speed-up (old median / new median).
func BenchmarkTiles(b *testing.B) {
	if !haveAVX2 {
		b.Skip("no AVX2/FMA/F16C on this CPU: the tiles are AVX2 assembly")
	}
	b.Run("F32/4x3-vs-4x2", benchF32Tiles)
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, Q4_K, Q6_K} {
		b.Run(fmt.Sprintf("%v/4x2-vs-4x1", typ), func(b *testing.B) { benchIntTiles(b, typ) })
	}
}

func benchF32Tiles(b *testing.B) {
	const cols, batch = f32Chunk, 6
	rng := rand.New(rand.NewPCG(1, 2))
	w, x := randVec(rng, 4*cols), randVec(rng, batch*cols)
	p := func(r int) unsafe.Pointer { return unsafe.Pointer(&w[r*cols]) }
	var res8 [8]float32
	var res12 [12]float32
	var tOld, tNew []time.Duration
	for b.Loop() {
		t0 := time.Now()
		for j := 0; j < batch; j += 2 {
			f32x4x2(p(0), p(1), p(2), p(3), &x[j*cols], &x[(j+1)*cols], cols, &res8)
		}
		t1 := time.Now()
		for j := 0; j < batch; j += 3 {
			f32x4x3(p(0), p(1), p(2), p(3), &x[j*cols], &x[(j+1)*cols], &x[(j+2)*cols], cols, &res12)
		}
		tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
	}
	reportTiles(b, 2*4*cols*batch, tOld, tNew)
}

func benchIntTiles(b *testing.B, typ DType) {
	const cols, batch = 4096, 6
	rng := rand.New(rand.NewPCG(3, 4))
	w := randMatrix(b, rng, typ, 4, cols)
	var act quantAct
	act.fill(pathAVX2, intFormat(typ), randVec(rng, batch*cols), batch, cols)
	elems, _, _ := typ.Block()
	nb, rb := cols/elems, w.rowBytes()
	p := func(r int) unsafe.Pointer { return unsafe.Pointer(&w.Raw[r*rb]) }
	xa := func(j int) unsafe.Pointer {
		if elems == QK_K {
			return unsafe.Pointer(&act.q8k[j*nb])
		}
		return unsafe.Pointer(&act.q8[j*nb])
	}
	kern := intKernel(typ)
	var res [8]float32
	var tOld, tNew []time.Duration
	for b.Loop() {
		t0 := time.Now()
		for j := range batch {
			kern.call(p(0), p(1), p(2), p(3), xa(j), nb, &res)
		}
		t1 := time.Now()
		for j := 0; j < batch; j += 2 {
			kern.call2(p(0), p(1), p(2), p(3), xa(j), xa(j+1), nb, &res)
		}
		tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
	}
	reportTiles(b, 2*4*cols*batch, tOld, tNew)
}

func reportTiles(b *testing.B, flops int, tOld, tNew []time.Duration) {
	mOld, mNew := median(tOld).Seconds(), median(tNew).Seconds()
	b.ReportMetric(float64(flops)/1e9/mOld, "old-GFLOP/s")
	b.ReportMetric(float64(flops)/1e9/mNew, "new-GFLOP/s")
	b.ReportMetric(mOld/mNew, "speedup")
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkRooflinePeak measures the compute the product tiles reach on
// L1-resident data, per worker and with 2 workers of a Pool: the F32 4x3
// tile (GFLOP/s: 2 per multiply-add) and the Q8_0 and Q4_K two-row
// integer tiles (the same count for their int8 multiply-adds). This is the
// roofline's achievable peak (BENCHMARKS.md), not the CPU's nominal one:
// prompt rows, whose weights are read once per chunk, are bound by it.
func BenchmarkRooflinePeak(b *testing.B) {
	if !haveAVX2 {
		b.Skip("no AVX2/FMA/F16C on this CPU: the tiles are AVX2 assembly")
	}
	for _, typ := range []DType{F32, Q8_0, Q4_K} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%v/w%d", typ, workers), func(b *testing.B) {
				benchPeak(b, typ, workers)
			})
		}
	}
}

func benchPeak(b *testing.B, typ DType, workers int) {
	const cols, reps = 1024, 64
	rng := rand.New(rand.NewPCG(5, 6))
	pool := NewPool(workers)
	defer pool.Close()
	type tile struct {
		w   *Matrix
		x   []float32
		act quantAct
	}
	tiles := make([]tile, workers) // one L1-resident tile per worker
	for i := range tiles {
		t := &tiles[i]
		t.w, t.x = randMatrix(b, rng, typ, 4, cols), randVec(rng, 6*cols)
		if typ != F32 {
			t.act.fill(pathAVX2, intFormat(typ), t.x, 6, cols)
		}
	}
	fn := func(lo, hi int) {
		var res8 [8]float32
		var res12 [12]float32
		for i := lo; i < hi; i++ {
			t := &tiles[i]
			for range reps {
				switch typ {
				case F32:
					p := func(r int) unsafe.Pointer { return unsafe.Pointer(&t.w.F32[r*cols]) }
					for j := 0; j < 6; j += 3 {
						f32x4x3(p(0), p(1), p(2), p(3), &t.x[j*cols], &t.x[(j+1)*cols], &t.x[(j+2)*cols], cols, &res12)
					}
				default:
					elems, _, _ := typ.Block()
					nb, rb := cols/elems, t.w.rowBytes()
					p := func(r int) unsafe.Pointer { return unsafe.Pointer(&t.w.Raw[r*rb]) }
					for j := 0; j < 6; j += 2 {
						var xa0, xa1 unsafe.Pointer
						if elems == QK_K {
							xa0, xa1 = unsafe.Pointer(&t.act.q8k[j*nb]), unsafe.Pointer(&t.act.q8k[(j+1)*nb])
						} else {
							xa0, xa1 = unsafe.Pointer(&t.act.q8[j*nb]), unsafe.Pointer(&t.act.q8[(j+1)*nb])
						}
						intKernel(typ).call2(p(0), p(1), p(2), p(3), xa0, xa1, nb, &res8)
					}
				}
			}
		}
	}
	for b.Loop() {
		pool.Run(workers, fn)
	}
	flops := float64(workers) * reps * 2 * 4 * 6 * cols
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
