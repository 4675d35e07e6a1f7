package train

import (
	"math"
	"testing"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// TestGradientCheck compares the analytic gradient of every LoRA parameter
// kind (A and B of each of the seven projections, both layers) with central
// finite differences of the float64 reference path, for a small random
// model of every served architecture; and the float32 trainer's gradients
// with the float64 ones.
func TestGradientCheck(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	for _, ac := range archCases() {
		t.Run(ac.name, func(t *testing.T) {
			m := newCaseModel(t, ac)
			const rank = 3
			w := randomWeights[float64](m.Config, rank, 11)
			ids, target := sequenceCase(m.Config, 9, 5)
			nt := newNet(m, pool, w)
			loss, count := nt.lossAndGrad(ids, target)
			if count != 5 || !(loss > 0) {
				t.Fatalf("loss %g over %d targets, want > 0 over 5", loss, count)
			}
			lossAt := func() float64 {
				ref := newNet(m, pool, w)
				l, _ := ref.lossAndGrad(ids, target)
				return l
			}
			const eps = 1e-5
			for l := range w.layers {
				for mod := range numModules {
					for _, kind := range []string{"A", "B"} {
						p, g := w.layers[l][mod].A, nt.g.layers[l][mod].A
						if kind == "B" {
							p, g = w.layers[l][mod].B, nt.g.layers[l][mod].B
						}
						for _, i := range probeIndices(g) {
							old := p[i]
							p[i] = old + eps
							up := lossAt()
							p[i] = old - eps
							down := lossAt()
							p[i] = old
							num := (up - down) / (2 * eps)
							if err := relErr(g[i], num); err > 1e-5 && math.Abs(g[i]-num) > 1e-9 {
								t.Errorf("layer %d %v.%s[%d]: analytic %.9g, finite difference %.9g (relative error %.2g)", l, mod, kind, i, g[i], num, err)
							}
						}
					}
				}
			}
			checkFloat32(t, m, pool, w, ids, target, nt.g, ac.quant)
		})
	}
}

// checkFloat32 runs the float32 trainer's pass on the same weights and
// compares every gradient tensor with the float64 one in norm.
func checkFloat32(t *testing.T, m *llama.Model, pool *kernels.Pool, w64 *weights[float64], ids []int, target []bool, g64 *weights[float64], quant bool) {
	t.Helper()
	w32 := newWeights[float32](m.Config, w64.rank, float64(w64.scale)*float64(w64.rank), allModules())
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
