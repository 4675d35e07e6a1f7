package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kiln-ai/kiln/engine/llama"
)

// float is the element type of the training arithmetic: float32 for the
// trainer, float64 for the reference path of the gradient checks.
type float interface{ ~float32 | ~float64 }

// pair is the LoRA of one projection: A (rank x in) and B (out x rank),
// row-major. Both are nil when the projection is not targeted.
type pair[F float] struct {
	A, B    []F
	in, out int
}

// weights holds the pairs of every layer, indexed [layer][module].
type weights[F float] struct {
	rank   int
	scale  F // alpha / rank
	layers [][numModules]pair[F]
}

// moduleShape is the (out, in) shape of projection m of a layer of c (a
// layer that has it: hasModule). A gated attention's query projection
// holds each head's query and gate.
func moduleShape(c llama.Config, m Module) (out, in int) {
	d, q, kv, h := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	switch m {
	case ModQ:
		return c.QProjDim(), d
	case ModK, ModV:
		return kv, d
	case ModO:
		return d, q
	case ModGate, ModUp:
		return h, d
	case ModLinQKV:
		return c.Linear.ConvDim(), d
	case ModLinZ:
		return c.Linear.VDim(), d
	case ModLinOut:
		return d, c.Linear.VDim()
	default:
		return d, h
	}
}

// newWeights allocates zero pairs for the targets of every layer that has
// them.
func newWeights[F float](c llama.Config, rank int, alpha float64, targets []Module) weights[F] {
	w := weights[F]{rank: rank, scale: F(alpha / float64(rank)), layers: make([][numModules]pair[F], c.Layers)}
	for l := range w.layers {
		for _, m := range targets {
			if !hasModule(c, l, m) {
				continue
			}
			out, in := moduleShape(c, m)
			w.layers[l][m] = pair[F]{A: make([]F, rank*in), B: make([]F, out*rank), in: in, out: out}
		}
	}
	return w
}

// each calls fn on every parameter slice (A then B, layer by layer, module
// by module), the order optimizers and checkpoints rely on.
func (w *weights[F]) each(fn func(p []F)) {
	for l := range w.layers {
		for m := range numModules {
			if p := &w.layers[l][m]; p.A != nil {
				fn(p.A)
				fn(p.B)
			}
		}
	}
}

// Adapter is a trainable LoRA adapter for one model shape: y = W·x +
// (Alpha/Rank)·B·(A·x) on each targeted projection of every layer. Rows of
// the q and k B matrices are in the model's own order (for a RopeNorm
// model, the interleaved order of GGUF files); WritePEFT converts them.
type Adapter struct {
	Rank    int
	Alpha   float64
	Targets []Module
	config  llama.Config
	w       weights[float32]
}

// NewAdapter makes an adapter initialised as PEFT does: every A uniform in
// ±1/sqrt(in) (kaiming-uniform with a = sqrt(5)), drawn deterministically
// from seed, and every B zero, so the adapted model starts equal to the
// base.
func NewAdapter(c llama.Config, rank int, alpha float64, targets []Module, seed uint64) (*Adapter, error) {
	if rank <= 0 {
		return nil, fmt.Errorf("train: lora rank %d must be positive", rank)
	}
	if !(alpha > 0) {
		return nil, fmt.Errorf("train: lora alpha %g must be positive", alpha)
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("train: no target modules")
	}
	a := &Adapter{Rank: rank, Alpha: alpha, Targets: append([]Module(nil), targets...), config: c}
	a.w = newWeights[float32](c, rank, alpha, targets)
	if a.Params() == 0 {
		return nil, fmt.Errorf("train: none of the target modules %v is a projection of this model", targets)
	}
	for l := range a.w.layers {
		for m := range numModules {
			p := &a.w.layers[l][m]
			if p.A == nil {
				continue
			}
			r := rand.New(rand.NewPCG(seed, initStream(l, m)))
			bound := 1 / math.Sqrt(float64(p.in))
			for i := range p.A {
				p.A[i] = float32((2*r.Float64() - 1) * bound)
			}
		}
	}
	return a, nil
}

// initStream is the random stream of the initial A of projection m of
// layer l: the seven projections of a dense model keep the streams they
// had before the linear projections existed (l·7 + m); those come after
// every such stream.
func initStream(l int, m Module) uint64 {
	const dense = uint64(ModDown) + 1
	if m < ModLinQKV {
		return uint64(l)*dense + uint64(m)
	}
	return 1<<32 + uint64(l)*uint64(numModules-ModLinQKV) + uint64(m-ModLinQKV)
}

// A is the (Rank x in) matrix of projection m of layer l, row-major, or nil
// when m is not targeted. It aliases the adapter's weights.
func (a *Adapter) A(l int, m Module) []float32 { return a.w.layers[l][m].A }

// B is the (out x Rank) matrix of projection m of layer l, row-major, or
// nil when m is not targeted. It aliases the adapter's weights.
func (a *Adapter) B(l int, m Module) []float32 { return a.w.layers[l][m].B }

// Config is the shape of the model the adapter was made for.
func (a *Adapter) Config() llama.Config { return a.config }

// Params is the number of trainable values.
func (a *Adapter) Params() int {
	n := 0
	a.w.each(func(p []float32) { n += len(p) })
	return n
}
