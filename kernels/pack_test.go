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
				prepare([]*Matrix{w})
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
// kernels read packed (Q8_0, Q4_K, Q5_K, Q6_K), packs a matrix once, and keeps a
// full group's packed bytes within 5% of its rows' (decode streams them).
func TestPrepareLeavesOtherTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	packs := map[DType]bool{Q8_0: true, Q4_K: true, Q5_K: true, Q6_K: true}
	for _, typ := range Types() {
		elems, _, _ := typ.Block()
		w := randMatrix(t, rng, typ, packRows, max(elems, 32)*4)
		w.pk = nil
		prepare([]*Matrix{w, w, nil})
		if got := w.pk != nil; got != packs[typ] || packable(typ) != packs[typ] {
			t.Errorf("%v: packed %v (packable %v), want %v", typ, got, packable(typ), packs[typ])
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
