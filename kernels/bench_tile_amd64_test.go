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
// against two 4x3; on avx512, two 4x3 calls against one ZMM 4x6, and for
// F16 three 4x2 calls against one 4x6), the packed outer-product 2x12
// kernel against four row-major 4x6 calls (benchPTiles), and the 32-value integer types
// (4096 columns: six one-row calls against three two-row ones).
// Alternating within one loop makes a loaded machine slow both alike; it
// reports each one's GFLOP/s from the median time per iteration (robust
// to the preemptions of a shared machine) and the speed-up (old median /
// new median).
func BenchmarkTiles(b *testing.B) {
	if !haveAVX2 {
		b.Skip("no AVX2/FMA/F16C on this CPU: the tiles are AVX2 assembly")
	}
	b.Run("F32/4x3-vs-4x2", benchF32Tiles)
	b.Run("F32/z4x6-vs-4x3", func(b *testing.B) { benchZTiles(b, F32) })
	b.Run("F16/z4x6-vs-4x2", func(b *testing.B) { benchZTiles(b, F16) })
	b.Run("F32/p2x12-vs-z4x6", func(b *testing.B) { benchPTiles(b, F32) })
	b.Run("F16/p2x12-vs-z4x6", func(b *testing.B) { benchPTiles(b, F16) })
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

// benchZTiles is the avx512 4x6 tile (one call) against the avx2 tiles
// it replaces (two 4x3 calls for F32, three 4x2 for F16) on six
// activation rows of 1024 columns.
func benchZTiles(b *testing.B, typ DType) {
	if !haveAVX512 {
		b.Skip("no AVX-512 F/BW/VL/VNNI on this CPU: the 4x6 tile is avx512 assembly")
	}
	const cols, batch = f32Chunk, 6
	rng := rand.New(rand.NewPCG(1, 2))
	w, x := randMatrix(b, rng, typ, 4, cols), randVec(rng, batch*cols)
	elem := 4
	base := unsafe.Pointer(unsafe.SliceData(w.F32))
	if typ == F16 {
		elem, base = 2, unsafe.Pointer(unsafe.SliceData(w.Raw))
	}
	p := func(r int) unsafe.Pointer { return unsafe.Add(base, r*cols*elem) }
	var res8 [8]float32
	var res12 [12]float32
	var out [4 * batch]float32
	var tOld, tNew []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if typ == F32 {
			for j := 0; j < batch; j += 3 {
				f32x4x3(p(0), p(1), p(2), p(3), &x[j*cols], &x[(j+1)*cols], &x[(j+2)*cols], cols, &res12)
			}
		} else {
			for j := 0; j < batch; j += 2 {
				f16x4x2(p(0), p(1), p(2), p(3), &x[j*cols], &x[(j+1)*cols], cols, &res8)
			}
		}
		t1 := time.Now()
		zKernels{typ: typ}.tile(6, p(0), uintptr(cols*elem), p(0), &x[0], cols*4, cols, &out[0], 16, 0)
		tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
	}
	reportTiles(b, 2*4*cols*batch, tOld, tNew)
}

// benchPTiles is the packed outer-product kernel of two groups against
// twelve activation rows (32 rows x 12 x 256 columns, one call) against
// the row-major 4x6 tile doing the same number of multiply-adds (four
// calls of 4 rows x 6 x 1024 columns), each on L1-resident data.
func benchPTiles(b *testing.B, typ DType) {
	if !haveAVX512 {
		b.Skip("no AVX-512 F/BW/VL/VNNI on this CPU: both kernels are avx512 assembly")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const zCols, pCols = 1024, 256
	wz, xz := rowMajorCopy(randMatrix(b, rng, typ, 4, zCols)), randVec(rng, 6*zCols)
	wp, xp := randMatrix(b, rng, typ, 32, pCols), randVec(rng, 12*pCols)
	wp.pk = nil
	prepare([]*Matrix{wp}, pathAVX512, nil)
	elem := 4
	base := unsafe.Pointer(unsafe.SliceData(wz.F32))
	if typ != F32 {
		elem, base = 2, unsafe.Pointer(unsafe.SliceData(wz.Raw))
	}
	p := packedOf(wp)
	var zout [24]float32
	pout := make([]float32, 12*32)
	k := pKernel(typ)
	var tOld, tNew []time.Duration
	for b.Loop() {
		t0 := time.Now()
		for range 4 {
			zKernels{typ: typ}.tile(6, base, uintptr(zCols*elem), base, &xz[0], zCols*4, zCols, &zout[0], 16, 0)
		}
		t1 := time.Now()
		k.call(2, 12, p.groupAt(0), uintptr(p.group), p.groupAt(0), &xp[0], pCols*4, pCols, &pout[0], 32*4, 0xffffffff, 0)
		tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
	}
	reportTiles(b, 2*32*12*pCols, tOld, tNew)
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
// tile (GFLOP/s: 2 per multiply-add), on avx512 the F32 ZMM 4x6 tile
// (F32-avx512), and the Q8_0 and Q4_K two-row integer tiles (the same
// count for their int8 multiply-adds). This is the roofline's achievable
// peak (BENCHMARKS.md), not the CPU's nominal one: prompt rows, whose
// weights are read once per chunk, are bound by it.
func BenchmarkRooflinePeak(b *testing.B) {
	if !haveAVX2 {
		b.Skip("no AVX2/FMA/F16C on this CPU: the tiles are AVX2 assembly")
	}
	for _, tc := range []struct {
		name string
		typ  DType
		zmm  bool
	}{{"F32", F32, false}, {"F32-avx512", F32, true}, {"Q8_0", Q8_0, false}, {"Q4_K", Q4_K, false}} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/w%d", tc.name, workers), func(b *testing.B) {
				if tc.zmm && !haveAVX512 {
					b.Skip("no AVX-512 F/BW/VL/VNNI on this CPU: the 4x6 tile is avx512 assembly")
				}
				benchPeak(b, tc.typ, tc.zmm, workers)
			})
		}
	}
}

func benchPeak(b *testing.B, typ DType, zmm bool, workers int) {
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
		var res12 [24]float32
		for i := lo; i < hi; i++ {
			t := &tiles[i]
			for range reps {
				switch {
				case zmm:
					w := unsafe.Pointer(&t.w.F32[0])
					f32z4x6(w, cols*4, w, &t.x[0], cols*4, cols, &res12[0], 16, 0)
				case typ == F32:
					p := func(r int) unsafe.Pointer { return unsafe.Pointer(&t.w.F32[r*cols]) }
					for j := 0; j < 6; j += 3 {
						f32x4x3(p(0), p(1), p(2), p(3), &t.x[j*cols], &t.x[(j+1)*cols], &t.x[(j+2)*cols], cols, (*[12]float32)(res12[:12]))
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

// BenchmarkFloatStep runs the F32 products of one step of a stories
// shape (per layer q, k, v, o, the two gates and the down projection, then
// the classifier: 438 MB for stories110M, 61 MB for stories15M) through a
// 2-worker pool of the avx2 path and one of the avx512 path, alternated
// step by step: a decode step (batch 1, bound by memory, or by the L3 for
// stories15M), a batched one (16) and a prompt chunk (64, bound by
// compute). It reports each path's weight GB/s from the median step time
// and the speed-up (avx2 median / avx512).
func BenchmarkFloatStep(b *testing.B) {
	if !haveAVX512 {
		b.Skip("no AVX-512 F/BW/VL/VNNI on this CPU: nothing to compare the avx2 path with")
	}
	for _, sh := range []struct {
		name                       string
		dim, hidden, layers, vocab int
	}{{"stories15M", 288, 768, 6, 32000}, {"stories110M", 768, 2048, 12, 32000}} {
		rng := rand.New(rand.NewPCG(3, 4))
		var ws []*Matrix
		bytes := 0
		add := func(rows, cols int) {
			ws = append(ws, randMatrix(b, rng, F32, rows, cols))
			bytes += 4 * rows * cols
		}
		for range sh.layers {
			for range 4 {
				add(sh.dim, sh.dim)
			}
			add(sh.hidden, sh.dim)
			add(sh.hidden, sh.dim)
			add(sh.dim, sh.hidden)
		}
		add(sh.vocab, sh.dim)
		for _, batch := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", sh.name, batch), func(b *testing.B) {
				x := randVec(rng, batch*sh.hidden)
				out := make([]float32, batch*sh.vocab)
				old, err := NewPoolOpts(2, Options{Path: "avx2"})
				if err != nil {
					b.Fatal(err)
				}
				defer old.Close()
				pz := NewPool(2)
				defer pz.Close()
				step := func(p *Pool) {
					for _, w := range ws {
						p.MatMul(out, w, x, batch)
					}
				}
				var tOld, tNew []time.Duration
				for b.Loop() {
					t0 := time.Now()
					step(old)
					t1 := time.Now()
					step(pz)
					tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
				}
				mOld, mNew := median(tOld).Seconds(), median(tNew).Seconds()
				b.ReportMetric(float64(bytes)/1e9/mOld, "avx2-GB/s")
				b.ReportMetric(float64(bytes)/1e9/mNew, "avx512-GB/s")
				b.ReportMetric(mOld/mNew, "speedup")
			})
		}
	}
}
