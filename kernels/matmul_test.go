package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMatMulRowsMatchesGeneric compares the float-activation products of
// every kernel path this CPU has (matMulRowsOn, as a Pool with
// FloatActivations runs them, and MatMulRows on the default path) with the
// pure-Go reference over awkward shapes: rows not a multiple of 4 or 16,
// columns not a multiple of 8, 16 or 32 and, for F32, F16 and BF16, longer than
// the column chunks (f32Chunk, zChunk, pChunk), every batch size from 1 to
// 17; each matrix as Prepare leaves it (on avx512 the float types read
// their packed copies) and as a copy without packed copies (the rows).
func TestMatMulRowsMatchesGeneric(t *testing.T) {
	if !haveAVX2 {
		t.Logf("no assembly kernels (GOARCH %s, no AVX2/FMA/F16C, or the purego tag): comparing the generic path with itself", runtime.GOARCH)
	}
	const tol = 2e-5 // relative to sum |w_i*x_i|
	rng := rand.New(rand.NewPCG(1, 2))
	floatCols := []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 257, 1024 + 16 + 5, 2*1024 + 48}
	shapes := map[DType][]int{F32: floatCols, F16: floatCols, BF16: floatCols, Q8_0: {32, 64, 96, 320}}
	for _, path := range Paths() {
		kp, err := parsePath(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []DType{F32, F16, BF16, Q8_0} {
			for _, cols := range shapes[typ] {
				for _, rows := range []int{1, 2, 3, 4, 5, 7, 9, 33} {
					if cols > 1024 && rows > 9 {
						continue // the long rows' chunking needs no more rows; keeps the reference quick
					}
					packed := randMatrix(t, rng, typ, rows, cols)
					for _, w := range []*Matrix{packed, rowMajorCopy(packed)} {
						layout := "rows"
						if packedOf(w) != nil {
							layout = "packed"
						} else if w == packed {
							continue // no packed copy on this CPU: the copy covers it
						}
						t.Run(fmt.Sprintf("%s/%v/%s/%dx%d", path, typ, layout, rows, cols), func(t *testing.T) {
							for batch := 1; batch <= 17; batch++ {
								x := randVec(rng, batch*cols)
								want := make([]float32, batch*rows)
								got := make([]float32, batch*rows)
								matMulRowsGeneric(want, w, x, batch, 0, rows)
								if kp == best {
									matMulRows(got, w, x, batch, 0, rows)
								} else {
									matMulRowsOn(kp, got, w, x, nil, batch, 0, rows)
								}
								scale := absDots(w, x, batch)
								for i := range want {
									if d := math.Abs(float64(got[i] - want[i])); d > tol*scale[i]+1e-30 {
										t.Fatalf("batch %d out[%d] = %v, want %v (diff %g, scale %g)", batch, i, got[i], want[i], d, scale[i])
									}
								}
							}
						})
					}
				}
			}
		}
	}
}

// TestFloatBatchInvisible: on the paths that guarantee it (generic, which
// sums each pair alone, and avx512, whose one-row kernel and tiles sum a
// pair in the same order, chunked by columns alone, and whose kernels
// over packed weights sum each output in column order whatever the
// batch), every activation row of a batched F32, F16 or BF16 product is
// bit-identical to the same row multiplied alone, whatever the batch
// size, the row's place in it, the split over workers or the shape (rows
// not a multiple of 4 or 16, so the last group runs on the one-row kernel
// or a lane mask; columns past the tail mask and the column chunks), for
// a matrix as Prepare leaves it and for a copy without packed copies. The avx2 path (and avxvnni, which runs avx2's
// float kernels) does not guarantee it for F32: a
// batch of one runs dotAVX (four accumulators over 32-value blocks), the
// tiles one accumulator per eight lanes, and only batches of three or
// more are chunked; there, batching moves results by float32 rounding
// (TestMatMulRowsMatchesGeneric bounds it), and TestF32TileRows checks
// what it does guarantee.
func TestFloatBatchInvisible(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	bits := func(v []float32) []uint32 {
		out := make([]uint32, len(v))
		for i, f := range v {
			out[i] = math.Float32bits(f)
		}
		return out
	}
	for _, path := range Paths() {
		if path == "avx2" || path == "avxvnni" {
			t.Logf("%s: skipped, its F32 kernels (avx2's) do not guarantee it (batch one runs dotAVX)", path)
			continue
		}
		for _, workers := range []int{1, 2} {
			pool, err := NewPoolOpts(workers, Options{Path: path, FloatActivations: true})
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			for _, typ := range []DType{F32, F16, BF16} {
				for _, cols := range []int{5, 16, 300, 1024 + 16 + 3, 2*1024 + 40} {
					const rows = 37
					packed := randMatrix(t, rng, typ, rows, cols)
					for _, w := range []*Matrix{packed, rowMajorCopy(packed)} {
						layout := "rows"
						if packedOf(w) != nil {
							layout = "packed"
						} else if w == packed {
							continue
						}
						t.Run(fmt.Sprintf("%s/w%d/%v/%s/%dx%d", path, workers, typ, layout, rows, cols), func(t *testing.T) {
							const maxBatch = 9
							x := randVec(rng, maxBatch*cols)
							alone := make([]float32, maxBatch*rows)
							for b := range maxBatch {
								pool.MatMul(alone[b*rows:(b+1)*rows], w, x[b*cols:(b+1)*cols], 1)
							}
							for batch := 2; batch <= maxBatch; batch++ {
								// Rows first..first+batch-1, so a row meets
								// different neighbours in each batch.
								first := (batch * 5) % (maxBatch - batch + 1)
								got := make([]float32, batch*rows)
								pool.MatMul(got, w, x[first*cols:(first+batch)*cols], batch)
								want := alone[first*rows : (first+batch)*rows]
								if d := cmp.Diff(bits(want), bits(got)); d != "" {
									t.Fatalf("batch %d (rows %d..): batched rows differ from rows alone (-alone +batched bits):\n%s", batch, first, d)
								}
							}
						})
					}
				}
			}
		}
	}
}

// TestMatMulRowsSubrange checks that a row range writes exactly its rows.
func TestMatMulRowsSubrange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []DType{F32, F16, BF16, Q8_0} {
		t.Run(typ.String(), func(t *testing.T) {
			const rows, cols, batch = 11, 64, 3
			w := randMatrix(t, rng, typ, rows, cols)
			x := randVec(rng, batch*cols)
			full := make([]float32, batch*rows)
			matMulRows(full, w, x, batch, 0, rows)
			got := make([]float32, batch*rows)
			want := make([]float32, batch*rows)
			for b := range batch {
				for r := 2; r < 9; r++ {
					want[b*rows+r] = full[b*rows+r]
				}
			}
			matMulRows(got, w, x, batch, 2, 9)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rows [2,9) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPoolMatMul checks that splitting over workers changes nothing: every
// row is computed by the same kernel whichever worker owns it. With float
// activations a pool computes exactly MatMulRows; with the default integer
// products, exactly what one worker computes.
func TestPoolMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	one := NewPool(1)
	defer one.Close()
	for _, workers := range []int{1, 2, 3, 8} {
		p := NewPool(workers)
		pf, err := NewPoolOpts(workers, Options{FloatActivations: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []DType{F32, F16, Q8_0, Q2_K, Q3_K, Q4_K, Q6_K} {
			for _, tc := range []struct{ rows, cols, batch int }{{1, 256, 1}, {9, 256, 2}, {130, 512, 1}, {257, 768, 5}} {
				t.Run(fmt.Sprintf("w%d/%v/%dx%dx%d", workers, typ, tc.rows, tc.cols, tc.batch), func(t *testing.T) {
					w := randMatrix(t, rng, typ, tc.rows, tc.cols)
					x := randVec(rng, tc.batch*tc.cols)
					want := make([]float32, tc.batch*tc.rows)
					matMulRows(want, w, x, tc.batch, 0, tc.rows)
					got := make([]float32, tc.batch*tc.rows)
					pf.MatMul(got, w, x, tc.batch)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("float activations (-MatMulRows +pool):\n%s", diff)
					}
					one.MatMul(want, w, x, tc.batch)
					p.MatMul(got, w, x, tc.batch)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("(-one worker +%d workers):\n%s", workers, diff)
					}
				})
			}
		}
		p.Close()
		pf.Close()
	}
}

// TestPoolMatMulNoAlloc: a steady-state product allocates nothing, on
// every path, with integer and float activations.
func TestPoolMatMulNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, path := range Paths() {
		for _, floatAct := range []bool{false, true} {
			p, err := NewPoolOpts(2, Options{Path: path, FloatActivations: floatAct})
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range []DType{F32, F16, BF16, Q8_0, Q4_0, Q2_K, Q3_K, Q4_K, Q6_K} {
				w := randMatrix(t, rng, typ, 256, 256)
				for _, batch := range []int{1, 3, 7} {
					x := randVec(rng, batch*256)
					out := make([]float32, batch*256)
					if n := testing.AllocsPerRun(50, func() { p.MatMul(out, w, x, batch) }); n != 0 {
						t.Errorf("%s/%v/batch %d (float activations %v): MatMul allocates %v times per call, want 0", path, typ, batch, floatAct, n)
					}
				}
			}
			p.Close()
		}
	}
}

func TestMatMulPanicsOnShortSlices(t *testing.T) {
	w := &Matrix{Rows: 4, Cols: 8, Type: F32, F32: make([]float32, 32)}
	tests := []struct {
		name   string
		out, x []float32
		w      *Matrix
	}{
		{"short x", make([]float32, 4), make([]float32, 7), w},
		{"short out", make([]float32, 3), make([]float32, 8), w},
		{"short weights", make([]float32, 4), make([]float32, 8), &Matrix{Rows: 4, Cols: 8, Type: F32, F32: make([]float32, 31)}},
		{"bad type", make([]float32, 4), make([]float32, 8), &Matrix{Rows: 4, Cols: 8, Type: 5}},
	}
	p := NewPool(2)
	defer p.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			p.MatMul(tc.out, tc.w, tc.x, 1)
		})
	}
}

// TestQ8KernelAccuracy bounds the Q8_0 product against the exact (float64)
// product of the dequantized weights: only float32 rounding remains.
func TestQ8KernelAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	w := randMatrix(t, rng, Q8_0, 37, 4096)
	x := randVec(rng, 2*4096)
	got := make([]float32, 2*37)
	matMulRows(got, w, x, 2, 0, 37)
	scale := absDots(w, x, 2)
	for b := range 2 {
		for r := range 37 {
			row := dequantRow(w, r)
			var exact float64
			for c, v := range row {
				exact += float64(v) * float64(x[b*4096+c])
			}
			if d := math.Abs(float64(got[b*37+r]) - exact); d > 1e-5*scale[b*37+r] {
				t.Errorf("row %d batch %d: got %v, exact %v (diff %g)", r, b, got[b*37+r], exact, d)
			}
		}
	}
}
