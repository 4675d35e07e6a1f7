package train

import (
	"math"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// gradSlicings are the ways TestGradientCheck cuts the pass into units and
// slices: whole (at its lengths, one unit a phase and layer), row chunks of
// one row in one slice, of four rows each its own slice (a 1 ns budget),
// of two rows in slices of a few units, and whole units each its own slice.
var gradSlicings = []struct {
	name   string
	chunk  int
	budget time.Duration
}{
	{"whole", 0, 0},
	{"rows-of-1", 1, 0},
	{"rows-of-4/unit-slices", 4, time.Nanosecond},
	{"rows-of-2/20us-slices", 2, 20 * time.Microsecond},
	{"whole/unit-slices", 0, time.Nanosecond},
}

// TestGradientCheck compares the analytic gradient of every LoRA parameter
// kind (A and B of each of the seven projections, both layers) with central
// finite differences of the float64 reference path, for a small random
// model of every served architecture, with the pass cut every way of
// gradSlicings (the float64 arithmetic of a row does not depend on the
// chunks, so every cut must also give the whole pass's gradient bit for
// bit); and the float32 trainer's gradients with the float64 ones.
func TestGradientCheck(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	for _, ac := range archCases() {
		t.Run(ac.name, func(t *testing.T) {
			m := newCaseModel(t, ac)
			const rank = 3
			w := randomWeights[float64](m.Config, rank, 11)
			ids, target := sequenceCase(m.Config, 9, 5)
			whole := slicedGrad(t, m, pool, w, ids, target, 0, 0)
			probes := finiteDifferences(m, pool, w, ids, target, whole)
			for _, sl := range gradSlicings {
				g := slicedGrad(t, m, pool, w, ids, target, sl.chunk, sl.budget)
				for _, p := range probes {
					got := p.of(g)
					if err := relErr(got, p.num); err > 1e-5 && math.Abs(got-p.num) > 1e-9 {
						t.Errorf("%s: layer %d %v.%s[%d]: analytic %.9g, finite difference %.9g (relative error %.2g)", sl.name, p.l, p.mod, p.kind, p.i, got, p.num, err)
					}
				}
				if !sameBits(whole, g) {
					t.Errorf("%s: the gradient differs from the whole pass's", sl.name)
				}
			}
			checkFloat32(t, m, pool, w, ids, target, whole, ac.quant)
		})
	}
}

// slicedGrad is the float64 gradient of the pass over ids in row chunks of
// chunk (0: the trainer's own), run in slices of budget (0: one slice).
func slicedGrad(t *testing.T, m *llama.Model, pool *kernels.Pool, w *weights[float64], ids []int, target []bool, chunk int, budget time.Duration) *weights[float64] {
	t.Helper()
	nt := newNet(m, pool, w)
	nt.chunk = chunk
	pa := nt.begin(ids, target, true)
	var rates unitRates
	slices := 0
	for ; !pa.done(); slices++ {
		runSlice(pa, budget, time.Now, &rates)
	}
	if loss, count := pa.loss, len(pa.rows); count != 5 || !(loss > 0) {
		t.Fatalf("loss %g over %d targets, want > 0 over 5", loss, count)
	}
	if budget == time.Nanosecond && slices != len(pa.units) {
		t.Errorf("a 1 ns budget ran %d units in %d slices, want one a slice", len(pa.units), slices)
	}
	if fwd := countUnits(pa.units, phForward, 0); chunk > 0 && fwd != (len(ids)+chunk-1)/chunk {
		t.Errorf("layer 0's forward is %d units, want %d chunks of %d rows", fwd, (len(ids)+chunk-1)/chunk, chunk)
	}
	return nt.g
}

// countUnits is the number of units of phase ph and layer l.
func countUnits(us []unit, ph phase, l int) int {
	n := 0
	for _, u := range us {
		if u.ph == ph && u.l == l {
			n++
		}
	}
	return n
}

// probe is one gradient entry and its finite difference.
type probe struct {
	l    int
	mod  Module
	kind string // "A" or "B"
	i    int
	num  float64
}

func (p probe) of(g *weights[float64]) float64 {
	if p.kind == "B" {
		return g.layers[p.l][p.mod].B[p.i]
	}
	return g.layers[p.l][p.mod].A[p.i]
}

// finiteDifferences picks probeIndices of every tensor of g and computes
// their central differences of the loss.
func finiteDifferences(m *llama.Model, pool *kernels.Pool, w *weights[float64], ids []int, target []bool, g *weights[float64]) []probe {
	lossAt := func() float64 {
		l, _ := newNet(m, pool, w).lossAndGrad(ids, target)
		return l
	}
	const eps = 1e-5
	var probes []probe
	for l := range w.layers {
		for mod := range numModules {
			for _, kind := range []string{"A", "B"} {
				if w.layers[l][mod].A == nil {
					continue
				}
				p, gr := w.layers[l][mod].A, g.layers[l][mod].A
				if kind == "B" {
					p, gr = w.layers[l][mod].B, g.layers[l][mod].B
				}
				for _, i := range probeIndices(gr) {
					old := p[i]
					p[i] = old + eps
					up := lossAt()
					p[i] = old - eps
					down := lossAt()
					p[i] = old
					probes = append(probes, probe{l: l, mod: mod, kind: kind, i: i, num: (up - down) / (2 * eps)})
				}
			}
		}
	}
	return probes
}

// sameBits reports whether two gradients are equal bit for bit.
func sameBits[F float](a, b *weights[F]) bool {
	var as [][]F
	a.each(func(p []F) { as = append(as, p) })
	i, same := 0, true
	b.each(func(p []F) {
		for j, v := range p {
			same = same && math.Float64bits(float64(v)) == math.Float64bits(float64(as[i][j]))
		}
		i++
	})
	return same && i == len(as)
}

// checkFloat32 runs the float32 trainer's pass on the same weights and
// compares every gradient tensor with the float64 one in norm.
func checkFloat32(t *testing.T, m *llama.Model, pool *kernels.Pool, w64 *weights[float64], ids []int, target []bool, g64 *weights[float64], quant bool) {
	t.Helper()
	w32 := newWeights[float32](m.Config, w64.rank, float64(w64.scale)*float64(w64.rank), everyModule())
	var src [][]float64
	w64.each(func(p []float64) { src = append(src, p) })
	i := 0
	w32.each(func(p []float32) {
		for j, v := range src[i] {
			p[j] = float32(v)
		}
		i++
	})
	if quant {
		// Served products of a Q8_0 base quantize the activations to 8
		// bits; the float-activation kernels are the exact reference.
		fp, err := kernels.NewPoolOpts(2, kernels.Options{FloatActivations: true})
		if err != nil {
			t.Fatal(err)
		}
		defer fp.Close()
		pool = fp
	}
	nt32 := newNet(m, pool, &w32)
	nt32.lossAndGrad(ids, target)
	var got [][]float32
	nt32.g.each(func(p []float32) { got = append(got, p) })
	k := 0
	const tol = 1e-3
	g64.each(func(want []float64) {
		var diff, norm float64
		for j, v := range want {
			d := float64(got[k][j]) - v
			diff += d * d
			norm += v * v
		}
		if e := math.Sqrt(diff / max(norm, 1e-30)); e > tol {
			t.Errorf("float32 gradient tensor %d: relative error %.3g against float64, want < %g", k, e, tol)
		}
		k++
	})
}

// probeIndices picks the largest-magnitude gradient entry and two spread
// ones.
func probeIndices(g []float64) []int {
	best := 0
	for i, v := range g {
		if math.Abs(v) > math.Abs(g[best]) {
			best = i
		}
	}
	return []int{best, len(g) / 3, len(g) - 1}
}

func relErr(a, b float64) float64 {
	return math.Abs(a-b) / max(math.Abs(a), math.Abs(b), 1e-300)
}
