package train

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// archCase is a small random model of one served architecture.
type archCase struct {
	name string
	cfg  llama.Config
	// quant converts every layer matrix to Q8_0 (the base used as served).
	quant bool
	tied  bool
}

func archCases() []archCase {
	base := llama.Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 29, SeqLen: 64}
	with := func(f func(*llama.Config)) llama.Config {
		c := base
		f(&c)
		return c
	}
	return []archCase{
		{name: "llama-norm-rope", cfg: with(func(c *llama.Config) { c.Arch = "llama" })},
		{name: "llama-neox-rope-tied", cfg: with(func(c *llama.Config) { c.Arch, c.Rope = "llama", llama.RopeNeoX }), tied: true},
		{name: "qwen2-bias", cfg: with(func(c *llama.Config) { c.Arch, c.Rope, c.QKVBias = "qwen2", llama.RopeNeoX, true })},
		{name: "qwen3-qk-norm", cfg: with(func(c *llama.Config) {
			c.Arch, c.Rope, c.QKNorm, c.HeadSize = "qwen3", llama.RopeNeoX, true, 16
		}), tied: true},
		{name: "llama-q8_0", cfg: with(func(c *llama.Config) { c.Arch = "llama" }), quant: true},
		{name: "qwen35-hybrid", cfg: hybridConfig(false), tied: true},
		{name: "qwen35-hybrid-tiled", cfg: hybridConfig(true), tied: true},
	}
}

// newCaseModel builds the case's model with weights scaled up from the
// 0.02 initialisation, so that attention is far from uniform and every
// path carries a visible gradient.
func newCaseModel(tb testing.TB, ac archCase) *llama.Model {
	tb.Helper()
	if ac.cfg.Hybrid() {
		return newHybridModel(tb, ac.cfg, 7)
	}
	m, err := llama.NewRandom(ac.cfg, 7, !ac.tied)
	if err != nil {
		tb.Fatal(err)
	}
	// Into new slices: the model's matrices may have packed copies
	// (kernels.Prepare), which belong to the data they were made from; a
	// matrix given new data has none, and its products read the rows.
	scale := func(w *kernels.Matrix, k float32) {
		f := make([]float32, len(w.F32))
		for i, v := range w.F32 {
			f[i] = v * k
		}
		w.F32 = f
	}
	scale(&m.Embed, 20)
	if !ac.tied {
		scale(m.Output, 20)
	}
	for i := range m.Layers {
		L := &m.Layers[i]
		for _, w := range []*kernels.Matrix{&L.WQ, &L.WK} {
			scale(w, 15)
		}
		for _, w := range []*kernels.Matrix{&L.WV, &L.WO, &L.W1, &L.W2, &L.W3} {
			scale(w, 10)
		}
		for _, b := range [][]float32{L.BQ, L.BK, L.BV} {
			for j := range b {
				b[j] *= 10
			}
		}
		if ac.quant {
			for _, w := range []*kernels.Matrix{&L.WQ, &L.WK, &L.WV, &L.WO, &L.W1, &L.W2, &L.W3} {
				*w = toQ8(w)
			}
		}
	}
	return m
}

// toQ8 quantizes an F32 matrix to Q8_0 row by row.
func toQ8(w *kernels.Matrix) kernels.Matrix {
	var raw []byte
	for r := range w.Rows {
		raw = kernels.QuantizeQ8(raw, w.F32[r*w.Cols:(r+1)*w.Cols])
	}
	return kernels.Matrix{Rows: w.Rows, Cols: w.Cols, Type: kernels.Q8_0, Raw: raw}
}

// randomWeights makes LoRA weights of every module with A and B both
// random (B is zero in a fresh adapter, which would hide A's gradient).
func randomWeights[F float](c llama.Config, rank int, seed uint64) *weights[F] {
	w := newWeights[F](c, rank, 2*float64(rank), everyModule())
	r := rand.New(rand.NewPCG(seed, 1))
	w.each(func(p []F) {
		for i := range p {
			p[i] = F(r.NormFloat64() * 0.2)
		}
	})
	return &w
}

// sequenceCase is a random sequence whose last part is the target.
func sequenceCase(c llama.Config, n int, seed uint64) ([]int, []bool) {
	r := rand.New(rand.NewPCG(seed, 2))
	ids := make([]int, n)
	target := make([]bool, n)
	for i := range ids {
		ids[i] = r.IntN(c.Vocab)
		target[i] = i >= n/2
	}
	return ids, target
}

func allModules() []Module { return []Module{ModQ, ModK, ModV, ModO, ModGate, ModUp, ModDown} }

// everyModule is every module kind, the linear ones too (newWeights gives
// each layer those it has).
func everyModule() []Module {
	var ms []Module
	for m := range numModules {
		ms = append(ms, m)
	}
	return ms
}

func fmtName(f string, l int) string { return fmt.Sprintf(f, l) }

// lastLogits is the trainer's forward pass's logits after the last token of
// ids.
func (t *Trainer) lastLogits(ids []int) []float32 {
	c := t.m.Config
	out := make([]float32, c.Vocab)
	t.claim()
	t.net.forward(ids)
	n := len(ids)
	t.net.la.matmul(out, t.m.Output, t.net.a.xf[(n-1)*c.Dim:n*c.Dim], 1)
	return out
}
