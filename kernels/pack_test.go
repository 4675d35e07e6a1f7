package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPackedMatchesRowMajor packs matrices of every packable type on any
// machine and checks the packed layout through packedRowsGo, which reads
// it lane by lane: every output is bit-identical to the row-major
// pure-Go integer product (the same integer sums and the same float
// operations in the same order), for row counts that leave a short last
// group and for row ranges that cut groups.
func TestPackedMatchesRowMajor(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, typ := range intTypes {
		if !packable(typ) {
			continue
		}
		for _, shape := range [][2]int{{9, 64}, {16, 96}, {37, 288}} {
			rows, cols := shape[0], shape[1]
			t.Run(fmt.Sprintf("%v/%dx%d", typ, rows, cols), func(t *testing.T) {
				w := randMatrix(t, rng, typ, rows, cols)
				w.pk = nil
				prepare([]*Matrix{w}, pathAVX512)
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

// TestPrepareLeavesOtherTypes: Prepare packs only the types the avx512
// kernels read packed, and packs a matrix once.
func TestPrepareLeavesOtherTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, typ := range Types() {
		elems, _, _ := typ.Block()
		w := randMatrix(t, rng, typ, 5, max(elems, 32))
		w.pk = nil
		prepare([]*Matrix{w, w, nil}, pathAVX512)
		if got := w.pk != nil; got != packable(typ) {
			t.Errorf("%v: packed %v, want %v", typ, got, packable(typ))
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
// avx512 and Prepare packs, so that TestIntProducts, TestIntBatchInvisible
// and the reference models run the packed kernels; elsewhere it says why
// they do not run here.
func TestAVX512Path(t *testing.T) {
	if !haveAVX512 {
		t.Skipf("this CPU (features: %s) lacks AVX-512 F/BW/VL/VNNI: the avx512 kernels are not tested here", CPUFeatures())
	}
	if Path() != "avx512" || Paths()[0] != "avx512" {
		t.Errorf("Path() = %q, Paths() = %v on an AVX-512 VNNI CPU", Path(), Paths())
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
