package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPackedMatchesRowMajor packs matrices of every packable type on any
// machine and checks the packed layout through packedRowsGo, which reads
// it lane by lane: every output is bit-identical to the row-major
// pure-Go integer product (the same integer sums and the same float
// operations in the same order), for row counts that leave a short last
// group, for row ranges that cut groups, and rows of 2, 3 and 9 blocks.
func TestPackedMatchesRowMajor(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, typ := range intTypes {
		if !packable(typ) {
			continue
		}
		elems, _, _ := typ.Block()
		for _, shape := range [][2]int{{9, 2}, {16, 3}, {37, 9}} {
			rows, cols := shape[0], shape[1]*elems
			t.Run(fmt.Sprintf("%v/%dx%d", typ, rows, cols), func(t *testing.T) {
				w := randMatrix(t, rng, typ, rows, cols)
				w.pk = nil
				prepare([]*Matrix{w}, pathAVX512, nil)
				if w.pk == nil || w.PackedBytes() == 0 {
					t.Fatal("prepare made no packed copy")
				}
				if g := (rows + packRows - 1) / packRows; len(w.pk.data) != g*w.pk.group {
					t.Fatalf("packed %d bytes, want %d groups of %d", len(w.pk.data), g, w.pk.group)
				}
				const batch = 3
				x := randVec(rng, batch*cols)
				var act quantAct
				act.fill(pathGeneric, intFormat(typ), x, batch, cols)
				want := make([]float32, batch*rows)
				intRowsGeneric(want, w, &act, batch, 0, rows)
				got := make([]float32, batch*rows)
				for _, cut := range [][2]int{{0, rows}, {0, min(5, rows)}, {min(5, rows), rows}} {
					packedRowsGo(got, w, &act, batch, cut[0], cut[1])
				}
				if d := cmp.Diff(f32bits(want), f32bits(got)); d != "" {
					t.Errorf("packed product differs from the row-major one (-row-major +packed bits):\n%s", d)
				}
			})
		}
	}
}

// TestPackedKernels runs the avx512 kernels (where this CPU has them)
// directly over the packed groups of every packable type, 37 rows (a
// short last group) of 512 columns against 11 activation rows (the 8-,
// 2- and 1-row kernels): the products are those of the pure-Go integer product to
// float32 rounding; each activation row's results are bit-identical to
// the same row multiplied alone; and a row range that cuts groups stores
// exactly its rows, with the values of the whole product.
func TestPackedKernels(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 F/BW/VL/VNNI on this CPU (or a purego build)")
	}
	rng := rand.New(rand.NewPCG(35, 36))
	for _, typ := range intTypes {
		if !packable(typ) {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			const rows, cols, batch = 37, 2 * QK_K, 11
			w := randMatrix(t, rng, typ, rows, cols)
			w.pk = nil
			prepare([]*Matrix{w}, pathAVX512, nil)
			x := randVec(rng, batch*cols)
			var act quantAct
			act.fill(pathGeneric, intFormat(typ), x, batch, cols)
			all := make([]float32, batch*rows)
			if !intRowsPacked(all, w, &act, batch, 0, rows) {
				t.Fatal("intRowsPacked did not run")
			}
			ref := make([]float32, batch*rows)
			intRowsGeneric(ref, w, &act, batch, 0, rows)
			scale := absDots(w, x, batch)
			for i := range all {
				if d := math.Abs(float64(all[i] - ref[i])); d > 1e-5*scale[i]+1e-30 {
					t.Fatalf("out[%d] = %v, pure-Go integer product %v (diff %g)", i, all[i], ref[i], d)
				}
			}
			nb, nk := cols/Q8Block, cols/QK_K
			for b := range batch {
				var one quantAct
				if intFormat(typ) == actQ8K {
					one.q8k = act.q8k[b*nk : (b+1)*nk]
				} else {
					one.q8 = act.q8[b*nb : (b+1)*nb]
				}
				got := make([]float32, rows)
				intRowsPacked(got, w, &one, 1, 0, rows)
				if d := cmp.Diff(f32bits(all[b*rows:(b+1)*rows]), f32bits(got)); d != "" {
					t.Errorf("activation row %d alone differs from it among %d (-batched +alone bits):\n%s", b, batch, d)
				}
			}
			for _, cut := range [][2]int{{0, 5}, {5, 21}, {21, rows}, {3, 4}, {16, 32}} {
				got := make([]float32, batch*rows)
				for i := range got {
					got[i] = float32(math.NaN())
				}
				intRowsPacked(got, w, &act, batch, cut[0], cut[1])
				for i, v := range got {
					if r := i % rows; r >= cut[0] && r < cut[1] {
						if math.Float32bits(v) != math.Float32bits(all[i]) {
							t.Fatalf("rows %v: out[%d] = %v, the whole product's %v", cut, i, v, all[i])
						}
					} else if !math.IsNaN(float64(v)) {
						t.Fatalf("rows %v: out[%d] (row %d) written", cut, i, r)
					}
				}
			}
		})
	}
}

// TestPrepareLeavesOtherTypes: Prepare packs only the types the avx512
// kernels read packed (Q8_0, the legacy 4- and 5-bit types, Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K, F32, F16 and BF16), packs a matrix once, and keeps a full group's
// packed bytes within 5% of its rows' (decode streams them).
func TestPrepareLeavesOtherTypes(t *testing.T) {
	packed := map[DType]bool{Q8_0: true, Q4_0: true, Q5_0: true, Q4_1: true, Q5_1: true, Q2_K: true, Q3_K: true, Q4_K: true, Q5_K: true, Q6_K: true, F32: true, F16: true, BF16: true}
	rng := rand.New(rand.NewPCG(33, 34))
	for _, typ := range Types() {
		if packable(typ) != packed[typ] {
			t.Errorf("%v: packable %v, want %v", typ, packable(typ), packed[typ])
		}
		elems, _, _ := typ.Block()
		w := randMatrix(t, rng, typ, packRows, max(elems, 32)*4)
		w.pk = nil
		prepare([]*Matrix{w, w, nil}, pathAVX512, nil)
		if got := w.pk != nil; got != packed[typ] {
			t.Errorf("%v: packed %v, want %v", typ, got, packed[typ])
		}
		if n := w.PackedBytes(); n > 0 && float64(n) > 1.05*float64(w.Bytes()) {
			t.Errorf("%v: %d packed bytes for %d in the rows", typ, n, w.Bytes())
		}
	}
}

func f32bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, f := range v {
		out[i] = math.Float32bits(f)
	}
	return out
}

// TestAVX512Path: on a CPU with AVX-512 F/BW/VL/VNNI the default path is
// avx512 (amx where AMX runs too) and Prepare packs, so that TestIntProducts, TestIntBatchInvisible
// and the reference models run the packed kernels; elsewhere it says why
// they do not run here.
func TestAVX512Path(t *testing.T) {
	if !haveAVX512 {
		t.Skipf("this CPU (features: %s) lacks AVX-512 F/BW/VL/VNNI: the avx512 kernels are not tested here", CPUFeatures())
	}
	want := "avx512"
	if haveAMX {
		want = "amx"
	}
	if Path() != want || Paths()[0] != want || !slices.Contains(Paths(), "avx512") {
		t.Errorf("Path() = %q, Paths() = %v on an AVX-512 VNNI CPU (AMX %v)", Path(), Paths(), haveAMX)
	}
	rng := rand.New(rand.NewPCG(35, 36))
	w := randMatrix(t, rng, Q8_0, 20, 64)
	if w.PackedBytes() == 0 {
		t.Error("Prepare made no packed copy on the avx512 path")
	}
	cp := *w
	cp.Raw = append([]byte(nil), w.Raw...)
	if cp.PackedBytes() != 0 {
		t.Error("a copy given other data still reports the packed copy of the original")
	}
}

// TestPackedPathsAgree: the avxvnni kernels do per lane what the avx512
// ones do, so on a CPU with both the two paths give the same bits, for
// batches that use every kernel width and row ranges that cut groups and
// their halves.
func TestPackedPathsAgree(t *testing.T) {
	if !haveAVX512 || !haveAVXVNNI {
		t.Skipf("needs both AVX-512 VNNI and AVX-VNNI (CPU features: %s)", CPUFeatures())
	}
	rng := rand.New(rand.NewPCG(37, 38))
	w := randMatrix(t, rng, Q8_0, 45, 96)
	for batch := 1; batch <= 11; batch++ {
		x := randVec(rng, batch*w.Cols)
		var act quantAct
		act.fill(pathAVX512, actQ8, x, batch, w.Cols)
		for _, cut := range [][2]int{{0, 45}, {3, 29}, {8, 16}, {17, 18}} {
			a := make([]float32, batch*w.Rows)
			v := make([]float32, batch*w.Rows)
			if !intRowsPacked(a, w, &act, batch, cut[0], cut[1]) || !intRowsPackedVNNI(v, w, &act, batch, cut[0], cut[1]) {
				t.Fatal("a packed kernel declined a packed Q8_0 matrix")
			}
			if d := cmp.Diff(f32bits(a), f32bits(v)); d != "" {
				t.Fatalf("batch %d rows %v: avxvnni differs from avx512 (-avx512 +avxvnni bits):\n%s", batch, cut, d)
			}
		}
	}
}

// TestAMXMatchesAVX512: the amx path's Q8_0 products (AMX tiles for each
// whole set of sixteen activation rows, the avx512 kernels for the rest)
// are bit for bit the avx512 path's, for batches at, past and between
// multiples of sixteen, row counts that leave a short last group and row
// ranges that cut groups; and within float32 rounding of the pure-Go
// integer product.
func TestAMXMatchesAVX512(t *testing.T) {
	if !haveAMX {
		t.Skipf("no AMX-INT8 here, or no leave from the kernel to use it (CPU features: %s)", CPUFeatures())
	}
	rng := rand.New(rand.NewPCG(39, 40))
	for _, shape := range [][2]int{{37, 96}, {16, 512}, {50, 288}} {
		rows, cols := shape[0], shape[1]
		w := randMatrix(t, rng, Q8_0, rows, cols)
		for _, batch := range []int{16, 17, 31, 33, 40} {
			x := randVec(rng, batch*cols)
			var act quantAct
			act.fill(pathAMX, actQ8, x, batch, cols)
			ref := make([]float32, batch*rows)
			intRowsGeneric(ref, w, &act, batch, 0, rows)
			scale := absDots(w, x, batch)
			for _, cut := range [][2]int{{0, rows}, {3, rows - 2}, {16, min(32, rows)}} {
				a := make([]float32, batch*rows)
				z := make([]float32, batch*rows)
				if !intRowsAMX(a, w, &act, batch, cut[0], cut[1]) || !intRowsPacked(z, w, &act, batch, cut[0], cut[1]) {
					t.Fatal("a packed kernel declined a packed Q8_0 matrix")
				}
				if d := cmp.Diff(f32bits(z), f32bits(a)); d != "" {
					t.Fatalf("%dx%d batch %d rows %v: amx differs from avx512 (-avx512 +amx bits):\n%s", rows, cols, batch, cut, d)
				}
				for i, v := range a {
					if r := i % rows; r >= cut[0] && r < cut[1] {
						if d := math.Abs(float64(v - ref[i])); d > 1e-5*scale[i]+1e-30 {
							t.Fatalf("%dx%d batch %d out[%d] = %v, pure-Go integer product %v", rows, cols, batch, i, v, ref[i])
						}
					}
				}
			}
		}
	}
}
