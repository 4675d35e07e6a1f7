package train

import (
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// net is the training forward and backward pass of one model with one set
// of LoRA weights, and the scratch they reuse from step to step.
type net[F float] struct {
	m     *llama.Model
	c     llama.Config
	w     *weights[F]
	la    linalg[F]
	rope  ropeTab[F]
	a     acts[F]
	g     *weights[F] // gradients, the shape of w
	bs    backScratch[F]
	att   attnScratch[F]
	row   []float32 // one embedding row
	rows  []int     // the last pass's target rows, reused
	units []unit    // the last pass's units, reused
	chunk int       // rows a chunk, when tests force it (0: chunkRows decides)
	lu    []F       // the delta rule's scratch: ValueDim a value head
}

func newNet[F float](m *llama.Model, pool *kernels.Pool, w *weights[F]) *net[F] {
	g := &weights[F]{rank: w.rank, scale: w.scale, layers: make([][numModules]pair[F], len(w.layers))}
	for l := range w.layers {
		for mod := range numModules {
			if p := w.layers[l][mod]; p.A != nil {
				g.layers[l][mod] = pair[F]{A: make([]F, len(p.A)), B: make([]F, len(p.B)), in: p.in, out: p.out}
			}
		}
	}
	return &net[F]{m: m, c: m.Config, w: w, la: linalg[F]{pool: pool}, g: g}
}

// forward runs the sequence ids through the layers, keeping the
// activations, and leaves the final normalised stream in a.xf: the forward
// units of a pass, so it computes what a training step's forward does.
func (nt *net[F]) forward(ids []int) { nt.begin(ids, nil, false).finish() }

// embed writes the embeddings of ids into layer 0's input.
func (nt *net[F]) embed(ids []int) {
	d := nt.c.Dim
	x := nt.a.layers[0].x
	if len(nt.row) < d {
		nt.row = make([]float32, d)
	}
	row := nt.row[:d]
	for t, id := range ids {
		kernels.DequantRow(row, &nt.m.Embed, id)
		for i, v := range row {
			x[t*d+i] = F(v)
		}
	}
}

// layerOut is where layer l writes its output: the next layer's input, or
// the final residual stream.
func (nt *net[F]) layerOut(l int) []F {
	if l+1 < len(nt.a.layers) {
		return nt.a.layers[l+1].x
	}
	return nt.a.xL
}

// finalNorm normalises rows s of the final residual stream into a.xf.
func (nt *net[F]) finalNorm(s span) {
	d := nt.c.Dim
	for t := s.lo; t < s.hi; t++ {
		nt.a.invf[t] = rmsNorm(nt.a.xf[t*d:(t+1)*d], nt.a.xL[t*d:(t+1)*d], nt.m.Norm, nt.c.NormEps)
	}
}

// layerForward runs layer l on rows s of its stored input and writes them
// to its output. Every step but the mixer's sequence step is row by row;
// attention reads the keys and values of rows before s.hi, and the delta
// rule continues the state of the rows before s, so the rows before s
// must have run already (the units go in order).
func (nt *net[F]) layerForward(l int, s span) {
	c, L, A := nt.c, &nt.m.Layers[l], &nt.a.layers[l]
	d, hd := c.Dim, c.HiddenDim
	for t := s.lo; t < s.hi; t++ {
		A.inv1[t] = rmsNorm(A.xn1[t*d:(t+1)*d], A.x[t*d:(t+1)*d], L.AttnNorm, c.NormEps)
	}
	if c.IsLinear(l) {
		nt.linForward(l, s)
	} else {
		nt.attnForward(l, s)
	}
	x1 := rowsOf(A.x1, s, d)
	axpy(1, rowsOf(A.x, s, d), x1)
	for t := s.lo; t < s.hi; t++ {
		A.inv2[t] = rmsNorm(A.xn2[t*d:(t+1)*d], A.x1[t*d:(t+1)*d], L.FFNNorm, c.NormEps)
	}
	xn2 := rowsOf(A.xn2, s, d)
	nt.linear(l, ModGate, rowsOf(A.g, s, hd), &L.W1, xn2, s)
	nt.linear(l, ModUp, rowsOf(A.u, s, hd), &L.W3, xn2, s)
	for i := s.lo * hd; i < s.hi*hd; i++ {
		A.h[i] = silu(A.g[i]) * A.u[i]
	}
	out := rowsOf(nt.layerOut(l), s, d)
	nt.linear(l, ModDown, out, &L.W2, rowsOf(A.h, s, hd), s)
	axpy(1, x1, out)
}

// attnForward runs rows s of attention layer l's mixer from A.xn1 into
// A.x1. A gated layer's query projection (A.qg) holds each head's query
// and then its gate, whose sigmoid scales the head's attention output
// (A.og, the output projection's input).
func (nt *net[F]) attnForward(l int, s span) {
	c, L, A := nt.c, &nt.m.Layers[l], &nt.a.layers[l]
	d, q, kv, hs := c.Dim, c.QDim(), c.KVDim(), c.HeadDim()
	xn1 := rowsOf(A.xn1, s, d)
	if c.AttnGate {
		nt.linear(l, ModQ, rowsOf(A.qg, s, 2*q), &L.WQ, xn1, s)
		for i := s.lo * c.Heads; i < s.hi*c.Heads; i++ {
			copy(A.q[i*hs:(i+1)*hs], A.qg[2*i*hs:(2*i+1)*hs])
		}
	} else {
		nt.linear(l, ModQ, rowsOf(A.q, s, q), &L.WQ, xn1, s)
	}
	nt.linear(l, ModK, rowsOf(A.k, s, kv), &L.WK, xn1, s)
	nt.linear(l, ModV, rowsOf(A.v, s, kv), &L.WV, xn1, s)
	for t := s.lo; t < s.hi; t++ {
		nt.qkPost(l, t)
	}
	nt.attention(A, s)
	src := A.o
	if c.AttnGate {
		for i := s.lo * c.Heads; i < s.hi*c.Heads; i++ {
			gate := A.qg[(2*i+1)*hs : (2*i+2)*hs]
			o, og := A.o[i*hs:(i+1)*hs], A.og[i*hs:(i+1)*hs]
			for j, g := range gate {
				og[j] = o[j] * sigmoid(g)
			}
		}
		src = A.og
	}
	nt.linear(l, ModO, rowsOf(A.x1, s, d), &L.WO, rowsOf(src, s, q), s)
}

// qkPost finishes row t of layer l's queries and keys after their
// projections: biases, the per-head norms (keeping their inputs) and RoPE.
func (nt *net[F]) qkPost(l, t int) {
	c, L, A := nt.c, &nt.m.Layers[l], &nt.a.layers[l]
	q, kv, hs := c.QDim(), c.KVDim(), c.HeadDim()
	qt, kt, vt := A.q[t*q:(t+1)*q], A.k[t*kv:(t+1)*kv], A.v[t*kv:(t+1)*kv]
	if c.QKVBias {
		addBias(qt, L.BQ)
		addBias(kt, L.BK)
		addBias(vt, L.BV)
	}
	if c.QKNorm {
		copy(A.qpre[t*q:(t+1)*q], qt)
		copy(A.kpre[t*kv:(t+1)*kv], kt)
		for h := range c.Heads {
			A.qinv[t*c.Heads+h] = rmsNorm(qt[h*hs:(h+1)*hs], A.qpre[t*q+h*hs:t*q+(h+1)*hs], L.QNorm, c.NormEps)
		}
		for h := range c.KVHeads {
			A.kinv[t*c.KVHeads+h] = rmsNorm(kt[h*hs:(h+1)*hs], A.kpre[t*kv+h*hs:t*kv+(h+1)*hs], L.KNorm, c.NormEps)
		}
	}
	nt.rope.apply(qt, t, false)
	nt.rope.apply(kt, t, false)
}

// linear sets out = W·x (+ scale·B·(A·x) when mod is targeted, keeping A·x
// in the activations) for rows s: out and x hold those rows only.
func (nt *net[F]) linear(l int, mod Module, out []F, w *kernels.Matrix, x []F, s span) {
	n := s.n()
	nt.la.matmul(out, w, x, n)
	p := &nt.w.layers[l][mod]
	if p.A == nil {
		return
	}
	r := nt.w.rank
	ax := rowsOf(nt.a.layers[l].ax[mod], s, r)
	for t := range n {
		xt, at, ot := x[t*p.in:(t+1)*p.in], ax[t*r:(t+1)*r], out[t*p.out:(t+1)*p.out]
		for j := range r {
			at[j] = dot(p.A[j*p.in:(j+1)*p.in], xt)
		}
		for o := range p.out {
			ot[o] += nt.w.scale * dot(p.B[o*r:(o+1)*r], at)
		}
	}
}

func addBias[F float](v []F, b []float32) {
	for i, x := range b {
		v[i] += F(x)
	}
}
