package train

import (
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// net is the training forward and backward pass of one model with one set
// of LoRA weights, and the scratch they reuse from step to step.
type net[F float] struct {
	m    *llama.Model
	c    llama.Config
	w    *weights[F]
	la   linalg[F]
	rope ropeTab[F]
	a    acts[F]
	g    *weights[F] // gradients, the shape of w
	bs   backScratch[F]
	att  attnScratch[F]
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
// activations, and leaves the final normalised stream in a.xf.
func (nt *net[F]) forward(ids []int) {
	c := nt.c
	n := len(ids)
	nt.a.grow(c, nt.w, n)
	nt.rope.grow(c, nt.m.RopeFactors, n)
	d := c.Dim
	x := nt.a.layers[0].x[:n*d]
	row := make([]float32, d)
	for t, id := range ids {
		kernels.DequantRow(row, &nt.m.Embed, id)
		for i, v := range row {
			x[t*d+i] = F(v)
		}
	}
	for l := range nt.a.layers {
		out := nt.a.xL[:n*d]
		if l+1 < len(nt.a.layers) {
			out = nt.a.layers[l+1].x[:n*d]
		}
		nt.layerForward(l, out)
	}
	for t := range n {
		nt.a.invf[t] = rmsNorm(nt.a.xf[t*d:(t+1)*d], nt.a.xL[t*d:(t+1)*d], nt.m.Norm, c.NormEps)
	}
}

// layerForward runs layer l on its stored input and writes its output
// residual stream to out.
func (nt *net[F]) layerForward(l int, out []F) {
	c, L, A := nt.c, &nt.m.Layers[l], &nt.a.layers[l]
	n, d, q, kv, hd := nt.a.n, c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	for t := range n {
		A.inv1[t] = rmsNorm(A.xn1[t*d:(t+1)*d], A.x[t*d:(t+1)*d], L.AttnNorm, c.NormEps)
	}
	nt.linear(l, ModQ, A.q[:n*q], &L.WQ, A.xn1[:n*d])
	nt.linear(l, ModK, A.k[:n*kv], &L.WK, A.xn1[:n*d])
	nt.linear(l, ModV, A.v[:n*kv], &L.WV, A.xn1[:n*d])
	hs := c.HeadDim()
	for t := range n {
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
	nt.attention(A)
	x1 := A.x1[:n*d]
	nt.linear(l, ModO, x1, &L.WO, A.o[:n*q])
	axpy(1, A.x[:n*d], x1)
	for t := range n {
		A.inv2[t] = rmsNorm(A.xn2[t*d:(t+1)*d], x1[t*d:(t+1)*d], L.FFNNorm, c.NormEps)
	}
	nt.linear(l, ModGate, A.g[:n*hd], &L.W1, A.xn2[:n*d])
	nt.linear(l, ModUp, A.u[:n*hd], &L.W3, A.xn2[:n*d])
	for i := range A.h[:n*hd] {
		A.h[i] = silu(A.g[i]) * A.u[i]
	}
	nt.linear(l, ModDown, out, &L.W2, A.h[:n*hd])
	axpy(1, x1, out)
}

// linear sets out = W·x (+ scale·B·(A·x) when mod is targeted, keeping A·x
// in the activations) for the a.n rows of x.
func (nt *net[F]) linear(l int, mod Module, out []F, w *kernels.Matrix, x []F) {
	n := nt.a.n
	nt.la.matmul(out, w, x, n)
	p := &nt.w.layers[l][mod]
	if p.A == nil {
		return
	}
	r := nt.w.rank
	ax := nt.a.layers[l].ax[mod]
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
