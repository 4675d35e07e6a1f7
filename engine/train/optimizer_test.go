package train

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kiln-ai/kiln/kernels"
)

// TestOptimizers checks the update rules against values computed by hand:
// AdamW's bias-corrected first steps (PyTorch's AdamW), its decoupled
// weight decay, and SGD.
func TestOptimizers(t *testing.T) {
	const lr = 0.1
	for _, tc := range []struct {
		name  string
		cfg   OptimizerConfig
		grads [][]float32 // one gradient per step
		want  []float32   // the parameters after the steps, from 1, -2
	}{
		{"sgd", OptimizerConfig{Kind: SGD}, [][]float32{{0.5, -1}, {0.5, -1}}, []float32{1 - 0.1, -2 + 0.2}},
		// Step 1: m̂ = g, v̂ = g², so the update is lr·g/(|g|+eps).
		{"adam_w one step", OptimizerConfig{}, [][]float32{{0.5, -4}}, []float32{1 - lr*0.5/(0.5+1e-8), -2 + lr*4/(4+1e-8)}},
		{"adam_w two steps", OptimizerConfig{}, [][]float32{{1, 1}, {3, -1}}, adamTwo(lr)},
		{"adam_w weight decay", OptimizerConfig{WeightDecay: 0.5}, [][]float32{{0, 0}}, []float32{1 * (1 - lr*0.5), -2 * (1 - lr*0.5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := []float32{1, -2}
			o := newOptimizer(tc.cfg, [][]float32{p})
			for _, g := range tc.grads {
				o.step([][]float32{p}, [][]float32{g}, lr)
			}
			if d := cmp.Diff(tc.want, p, cmpopts.EquateApprox(1e-6, 1e-7)); d != "" {
				t.Errorf("parameters (-want +got):\n%s", d)
			}
		})
	}
}

// adamTwo is AdamW (0.9, 0.999, 1e-8) after gradients (1, 1) then (3, -1)
// from (1, -2), computed step by step in float64.
func adamTwo(lr float64) []float32 {
	p := []float64{1, -2}
	g := [][]float64{{1, 1}, {3, -1}}
	m, v := make([]float64, 2), make([]float64, 2)
	for s, gs := range g {
		for i := range p {
			m[i] = 0.9*m[i] + 0.1*gs[i]
			v[i] = 0.999*v[i] + 0.001*gs[i]*gs[i]
			mh := m[i] / (1 - math.Pow(0.9, float64(s+1)))
			vh := v[i] / (1 - math.Pow(0.999, float64(s+1)))
			p[i] -= lr * mh / (math.Sqrt(vh) + 1e-8)
		}
	}
	return []float32{float32(p[0]), float32(p[1])}
}

// TestTrainingDeterministic: the same seed gives bit-identical adapters
// after the same steps (A initialised from the seed, B zero), another seed
// another adapter.
func TestTrainingDeterministic(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	m := newCaseModel(t, archCases()[0])
	ids, target := sequenceCase(m.Config, 12, 3)
	run := func(seed uint64) [][]float32 {
		cfg := DefaultConfig()
		cfg.LoraRank, cfg.Seed, cfg.LearningRate = 4, seed, 1e-2
		tr, err := New(m, pool, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if b := tr.Adapter().B(0, ModQ); slices.ContainsFunc(b, func(v float32) bool { return v != 0 }) {
			t.Fatal("a fresh adapter's B is not zero")
		}
		for range 3 {
			if _, err := tr.Step(Sequence{IDs: ids, Target: target}); err != nil {
				t.Fatal(err)
			}
		}
		var out [][]float32
		tr.Adapter().w.each(func(p []float32) { out = append(out, slices.Clone(p)) })
		return out
	}
	a, b, c := run(1), run(1), run(2)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("same seed, different adapters (-first +second):\n%s", d)
	}
	if cmp.Equal(a, c) {
		t.Error("seeds 1 and 2 gave the same adapter")
	}
}
