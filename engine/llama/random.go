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
	const std = 0.02
	r := &randomFill{c: c, std: std, resid: std / math.Sqrt(2*float64(c.Layers))}
	m := &Model{Config: c, Layers: make([]Layer, c.Layers)}
	m.Embed = r.mat(c.Vocab, c.Dim, std)
	for l := range m.Layers {
		m.Layers[l] = r.layer(l)
	}
	m.Norm = ones(c.Dim)
	if untied {
		out := r.mat(c.Vocab, c.Dim, std)
		m.Output = &out
	} else {
		m.Output = &m.Embed
	}

	var wg sync.WaitGroup
	for i, j := range r.jobs {
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

// randomFill lays out a random model's tensors, each a job that fills it
// from its own stream (the job's index), so that the tensors' order is
// their streams' and a shape always gets the same weights.
type randomFill struct {
	c          Config
	std, resid float64 // the weights' deviation, and the residual projections'
	jobs       []randomJob
}

type randomJob struct {
	dst []float32
	std float64
}

func (r *randomFill) mat(rows, cols int, sd float64) kernels.Matrix {
	f := r.vec(rows*cols, sd)
	return kernels.Matrix{Rows: rows, Cols: cols, Type: kernels.F32, F32: f}
}

func (r *randomFill) vec(n int, sd float64) []float32 {
	f := make([]float32, n)
	r.jobs = append(r.jobs, randomJob{f, sd})
	return f
}

// layer lays out decoder block l: its feed-forward, then its mixer (a
// Gated DeltaNet in a hybrid's linear layers, else attention with the
// biases and Q/K norms the shape has).
func (r *randomFill) layer(l int) Layer {
	c, std := r.c, r.std
	d, kv, hd, q := c.Dim, c.KVDim(), c.HiddenDim, c.QDim()
	L := Layer{
		AttnNorm: ones(d),
		FFNNorm:  ones(d),
		W1:       r.mat(hd, d, std),
		W2:       r.mat(d, hd, r.resid),
		W3:       r.mat(hd, d, std),
	}
	if c.IsLinear(l) {
		s := c.Linear
		L.Lin = &DeltaNet{
			WQKV: r.mat(s.ConvDim(), d, std), WZ: r.mat(s.VDim(), d, std),
			WB: r.mat(s.ValueHeads, d, std), WA: r.mat(s.ValueHeads, d, std), WOut: r.mat(d, s.VDim(), r.resid),
			Conv: r.vec(s.ConvDim()*s.ConvKernel, 0.3), DtBias: r.vec(s.ValueHeads, 0.5),
			A: r.vec(s.ValueHeads, 1), Norm: ones(s.ValueDim),
		}
		return L
	}
	L.WQ, L.WK, L.WV, L.WO = r.mat(c.QProjDim(), d, std), r.mat(kv, d, std), r.mat(kv, d, std), r.mat(d, q, r.resid)
	if c.QKVBias {
		L.BQ, L.BK, L.BV = r.vec(q, std), r.vec(kv, std), r.vec(kv, std)
	}
	if c.QKNorm {
		L.QNorm, L.KNorm = r.vec(c.HeadDim(), 0.1), r.vec(c.HeadDim(), 0.1)
	}
	return L
}

// ones is n ones: a norm that changes nothing.
func ones(n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		f[i] = 1
	}
	return f
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
