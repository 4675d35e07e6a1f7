package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// hybridConfig is a tiny Qwen3.5-like shape: two Gated DeltaNet layers,
// then gated full attention with QK norms and partial rotary; tiled says
// the value heads are in GGUF's tiled order.
func hybridConfig(tiled bool) llama.Config {
	return llama.Config{
		Arch: "qwen35", Dim: 32, HiddenDim: 48, Layers: 3, Heads: 4, KVHeads: 2, HeadSize: 16, Vocab: 29, SeqLen: 64,
		Rope: llama.RopeNeoX, QKNorm: true, AttnGate: true, RotaryDim: 8, FullAttnInterval: 3,
		Linear: llama.LinearShape{KeyHeads: 2, ValueHeads: 4, KeyDim: 8, ValueDim: 6, ConvKernel: 4, Tiled: tiled},
	}
}

// newHybridModel builds a random model of hybrid shape c: llama.NewRandom
// of the dense shape for the embeddings, norms and feed-forwards, then the
// gated attention's query projection and the linear layers' mixers drawn
// here, at scales that keep every path's gradient visible.
func newHybridModel(tb testing.TB, c llama.Config, seed uint64) *llama.Model {
	tb.Helper()
	dense := c
	dense.Arch, dense.FullAttnInterval, dense.Linear, dense.AttnGate, dense.RotaryDim = "qwen3", 0, llama.LinearShape{}, false, 0
	m, err := llama.NewRandom(dense, seed, false)
	if err != nil {
		tb.Fatal(err)
	}
	// The dense shape with the defaults NewRandom filled in, and the
	// hybrid's fields.
	c.RopeTheta, c.NormEps, c.Arch = m.Config.RopeTheta, m.Config.NormEps, "qwen35"
	m.Config = c
	r := rand.New(rand.NewPCG(seed, 99))
	vec := func(n int, mean, sd float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + sd*r.NormFloat64())
		}
		return v
	}
	mat := func(rows, cols int, sd float64) kernels.Matrix {
		return kernels.Matrix{Rows: rows, Cols: cols, Type: kernels.F32, F32: vec(rows*cols, 0, sd)}
	}
	m.Embed = mat(c.Vocab, c.Dim, 1)
	m.Output = &m.Embed
	d, ls := c.Dim, c.Linear
	for l := range m.Layers {
		L := &m.Layers[l]
		L.W1, L.W3, L.W2 = mat(c.HiddenDim, d, 0.3), mat(c.HiddenDim, d, 0.3), mat(d, c.HiddenDim, 0.2)
		L.AttnNorm, L.FFNNorm = vec(d, 1, 0.1), vec(d, 1, 0.1)
		if !c.IsLinear(l) {
			L.WQ, L.WK, L.WV, L.WO = mat(c.QProjDim(), d, 0.4), mat(c.KVDim(), d, 0.4), mat(c.KVDim(), d, 0.3), mat(d, c.QDim(), 0.2)
			L.QNorm, L.KNorm = vec(c.HeadDim(), 1, 0.1), vec(c.HeadDim(), 1, 0.1)
			continue
		}
		L.WQ, L.WK, L.WV, L.WO, L.QNorm, L.KNorm = kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, nil, nil
		D := &llama.DeltaNet{
			WQKV: mat(ls.ConvDim(), d, 0.3), WZ: mat(ls.VDim(), d, 0.3), WB: mat(ls.ValueHeads, d, 0.3),
			WA: mat(ls.ValueHeads, d, 0.1), WOut: mat(d, ls.VDim(), 0.3),
			Conv: vec(ls.ConvDim()*ls.ConvKernel, 0, 0.3), Norm: vec(ls.ValueDim, 1, 0.1),
		}
		for ch := range ls.ConvDim() {
			D.Conv[ch*ls.ConvKernel+ls.ConvKernel-1] += 0.5
		}
		for range ls.ValueHeads {
			D.DtBias = append(D.DtBias, float32(-1+1.5*r.Float64()))
			D.A = append(D.A, -float32(math.Exp(math.Log(0.05+0.45*r.Float64()))))
		}
		L.Lin = D
	}
	return m
}

// TestGradientThroughLinearLayers: the gradient of a LoRA pair before a
// Gated DeltaNet layer (layer 0's feed-forward, and its own mixer's) goes
// through the later layers: with those layers' LoRA off, it still matches
// the finite differences (TestGradientCheck covers every pair), and it is
// not zero.
func TestGradientThroughLinearLayers(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	m := newHybridModel(t, hybridConfig(false), 5)
	w := randomWeights[float64](m.Config, 2, 3)
	for l := 1; l < len(w.layers); l++ {
		w.layers[l] = [numModules]pair[float64]{}
	}
	ids, target := sequenceCase(m.Config, 12, 4)
	nt := newNet(m, pool, w)
	nt.chunk = 5
	nt.lossAndGrad(ids, target)
	probes := finiteDifferences(m, pool, w, ids, target, nt.g)
	if len(probes) == 0 {
		t.Fatal("no probes")
	}
	for _, p := range probes {
		got := p.of(nt.g)
		if err := relErr(got, p.num); err > 1e-5 && math.Abs(got-p.num) > 1e-9 {
			t.Errorf("layer %d %v.%s[%d]: analytic %.9g, finite difference %.9g", p.l, p.mod, p.kind, p.i, got, p.num)
		}
		if p.num == 0 {
			t.Errorf("layer %d %v.%s[%d]: zero gradient", p.l, p.mod, p.kind, p.i)
		}
	}
}

// TestHybridDefaultTargets: on a hybrid the default targets adapt every
// layer's mixer (q, k, v, o on the attention layer, qkv, z, out on the
// linear ones); naming only attention modules leaves the linear layers'
// mixers alone; a dense model refuses linear modules alone.
func TestHybridDefaultTargets(t *testing.T) {
	pool := kernels.NewPool(1)
	defer pool.Close()
	m := newHybridModel(t, hybridConfig(false), 1)
	tr, err := New(m, pool, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tr.Adapter().Targets, DefaultModulesFor(m.Config); !slices.Equal(got, want) {
		t.Errorf("default targets %v, want %v", got, want)
	}
	for l := range m.Config.Layers {
		for _, mod := range DefaultModulesFor(m.Config) {
			if has := tr.Adapter().A(l, mod) != nil; has != hasModule(m.Config, l, mod) {
				t.Errorf("layer %d %v: pair present %v", l, mod, has)
			}
		}
	}
	cfg := DefaultConfig()
	cfg.TargetModules = []string{"q", "o"}
	if tr, err := New(m, pool, cfg); err != nil || tr.Adapter().A(0, ModLinQKV) != nil {
		t.Errorf("targets q, o: err %v, the linear layer adapted", err)
	}
	if _, err := NewAdapter(archCases()[0].cfg, 2, 4, []Module{ModLinQKV, ModLinZ}, 1); err == nil {
		t.Error("a dense model took linear modules alone")
	}
}
