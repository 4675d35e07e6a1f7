package llama

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/kiln-ai/kiln/kernels"
)

// NewRandom makes a model of shape c with F32 weights drawn deterministically
// from seed: the same (c, seed) always gives the same weights. Weights are
// uniform with the standard deviation of a GPT-2 style initialisation (0.02,
// residual projections scaled by 1/sqrt(2*Layers)), norms are one, and the
// classifier is separate from the embedding when untied. Q/K/V biases
// (c.QKVBias) are uniform with the same deviation; Q/K norm weights
// (c.QKNorm) are one plus uniform noise of deviation 0.1, so that a wrong
// head layout shows. It is the weight source of the embedded default model
// and of the benchmarks. The weights are laid out for the kernels when it
// returns (kernels.Prepare may give them packed copies): to change one,
// give the matrix new data rather than writing into it.
//
// Tensors are filled in parallel by short-lived goroutines, each from its
// own stream derived from seed, all joined before NewRandom returns.
func NewRandom(c Config, seed uint64, untied bool) (*Model, error) {
	return newRandom(c, seed, untied, nil)
}

// newRandom is NewRandom that lets shape change the weights before they
// are laid out for the kernels.
func newRandom(c Config, seed uint64, untied bool, shape func(*Model)) (*Model, error) {
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	d, kv, hd, q := c.Dim, c.KVDim(), c.HiddenDim, c.QDim()
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))

	type job struct {
		dst []float32
		std float64
	}
	var jobs []job
	mat := func(rows, cols int, sd float64) kernels.Matrix {
		f := make([]float32, rows*cols)
		jobs = append(jobs, job{f, sd})
		return kernels.Matrix{Rows: rows, Cols: cols, Type: kernels.F32, F32: f}
	}
	vec := func(n int, sd float64) []float32 {
		f := make([]float32, n)
		jobs = append(jobs, job{f, sd})
		return f
	}
	ones := func(n int) []float32 {
		f := make([]float32, n)
		for i := range f {
			f[i] = 1
		}
		return f
	}
	m := &Model{Config: c, Layers: make([]Layer, c.Layers)}
	m.Embed = mat(c.Vocab, d, std)
	for l := range m.Layers {
		m.Layers[l] = Layer{
			AttnNorm: ones(d),
			FFNNorm:  ones(d),
			W1:       mat(hd, d, std),
			W2:       mat(d, hd, resid),
			W3:       mat(hd, d, std),
		}
		if c.IsLinear(l) {
			s := c.Linear
			m.Layers[l].Lin = &DeltaNet{
				WQKV: mat(s.ConvDim(), d, std), WZ: mat(s.VDim(), d, std),
				WB: mat(s.ValueHeads, d, std), WA: mat(s.ValueHeads, d, std), WOut: mat(d, s.VDim(), resid),
				Conv: vec(s.ConvDim()*s.ConvKernel, 0.3), DtBias: vec(s.ValueHeads, 0.5),
				A: vec(s.ValueHeads, 1), Norm: ones(s.ValueDim),
			}
			continue
		}
		L := &m.Layers[l]
		L.WQ, L.WK, L.WV, L.WO = mat(c.QProjDim(), d, std), mat(kv, d, std), mat(kv, d, std), mat(d, q, resid)
		if l := &m.Layers[l]; c.QKVBias {
			l.BQ, l.BK, l.BV = vec(q, std), vec(kv, std), vec(kv, std)
		}
		if l := &m.Layers[l]; c.QKNorm {
			l.QNorm, l.KNorm = vec(c.HeadDim(), 0.1), vec(c.HeadDim(), 0.1)
		}
	}
	m.Norm = ones(d)
	if untied {
		out := mat(c.Vocab, d, std)
		m.Output = &out
	} else {
		m.Output = &m.Embed
	}

	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { fillUniform(j.dst, j.std, seed, uint64(i)) })
	}
	wg.Wait()
	for i := range m.Layers {
		if dn := m.Layers[i].Lin; dn != nil {
			randomDeltaNet(dn, c.Linear.ConvKernel)
		}
		for _, w := range [][]float32{m.Layers[i].QNorm, m.Layers[i].KNorm} {
			for j := range w {
				w[j]++ // norm weights scatter around one
			}
		}
	}
	if shape != nil {
		shape(m)
	}
	if err := m.finish(nil); err != nil {
		return nil, err
	}
	return m, nil
}

// randomDeltaNet turns a Gated DeltaNet layer's uniform draws into the
// ranges a trained one has: the convolution's newest tap near 0.5 (the
// reference model's), decay rates A = −exp(u) in (−e^−1.7, −e^1.7) and
// write strengths around one half.
func randomDeltaNet(dn *DeltaNet, taps int) {
	for i := taps - 1; i < len(dn.Conv); i += taps {
		dn.Conv[i] += 0.5
	}
	for i, u := range dn.A {
		dn.A[i] = -float32(math.Exp(float64(u) - 1))
	}
}

// fillUniform fills dst with uniform values of standard deviation std from
// the PCG stream (seed, stream).
func fillUniform(dst []float32, std float64, seed, stream uint64) {
	r := rand.NewPCG(seed, stream)
	// Uniform on [-a, a) has standard deviation a/sqrt(3).
	a := float32(std * math.Sqrt(3))
	const inv = 1.0 / (1 << 24)
	for i := 0; i < len(dst); i += 2 {
		u := r.Uint64()
		dst[i] = (float32(u>>40)*inv*2 - 1) * a
		if i+1 < len(dst) {
			dst[i+1] = (float32(u>>8&(1<<24-1))*inv*2 - 1) * a
		}
	}
}
