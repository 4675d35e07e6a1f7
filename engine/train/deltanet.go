package train

import (
	"math"

	"github.com/kiln-ai/kiln/engine/llama"
)

// The training forward of a hybrid's Gated DeltaNet layers, as
// llama/deltanet.go computes it for inference: the projections, a causal
// depthwise convolution over each row's last ConvKernel inputs and SiLU,
// queries and keys L2-normalised per key head (the queries also scaled by
// 1/sqrt(KeyDim)), per value head β = sigmoid(WB·x) and the log-decay
// g = A·softplus(WA·x + dt_bias), the gated delta rule on the head's state
// S (S ← e^g·S; S ← S + k·(β·(v − Sᵀk))ᵀ; o = Sᵀq), an RMSNorm of each
// head's output times silu(z), and the output projection.
//
// The delta rule runs in time order, so a forward unit continues the state
// the previous unit of its layer left (lin.state), and the state before
// every block-th row is kept (lin.ck): the backward pass recomputes the
// states of one block from its checkpoint and runs the block in reverse
// (deltanet_back.go). Memory: one state a block of rows.

// deltaBlock is the rows of a delta-rule checkpoint block: the backward
// keeps deltaBlock+1 states of one layer and the forward one state every
// deltaBlock rows, so a block of about sqrt(T) rows would minimise the
// sum; 64 suits the contexts a step trains on.
const deltaBlock = 64

// block is the delta rule's checkpoint rows: deltaBlock, or nt.chunk when
// tests force row chunks (the result does not depend on it).
func (nt *net[F]) block() int {
	if nt.chunk > 0 {
		return nt.chunk
	}
	return deltaBlock
}

// linForward runs rows s of linear layer l's mixer from A.xn1 into A.x1.
func (nt *net[F]) linForward(l int, s span) {
	c, D, A := nt.c, nt.m.Layers[l].Lin, &nt.a.layers[l]
	ls, La := c.Linear, &A.lin
	n, cd, vd, vh := s.n(), ls.ConvDim(), ls.VDim(), ls.ValueHeads
	xn1 := rowsOf(A.xn1, s, c.Dim)
	nt.linear(l, ModLinQKV, rowsOf(La.c, s, cd), &D.WQKV, xn1, s)
	nt.linear(l, ModLinZ, rowsOf(La.z, s, vd), &D.WZ, xn1, s)
	nt.la.matmul(rowsOf(La.beta, s, vh), &D.WB, xn1, n)
	nt.la.matmul(rowsOf(La.a, s, vh), &D.WA, xn1, n)
	for t := s.lo; t < s.hi; t++ {
		nt.convRow(l, t)
		for h := range vh {
			i := t*vh + h
			La.beta[i] = sigmoid(La.beta[i])
			La.a[i] += F(D.DtBias[h])
			La.g[i] = F(D.A[h]) * softplus(La.a[i])
		}
	}
	nt.la.pool.Run(vh, func(lo, hi int) {
		for h := lo; h < hi; h++ {
			nt.deltaForward(La, h, s)
		}
	})
	dv := ls.ValueDim
	for t := s.lo; t < s.hi; t++ {
		for h := range vh {
			i := t*vd + h*dv
			o, yn, z := La.o[i:i+dv], La.yn[i:i+dv], La.z[i:i+dv]
			La.oInv[t*vh+h] = rmsNorm(yn, o, D.Norm, c.NormEps)
			for j, zv := range z {
				yn[j] *= silu(zv)
			}
		}
	}
	nt.linear(l, ModLinOut, rowsOf(A.x1, s, c.Dim), &D.WOut, rowsOf(La.yn, s, vd), s)
}

// convRow convolves row t of layer l's projections with the rows before
// it (zeros before the sequence) into lin.y, and sets lin.qkv to its SiLU
// with the query and key heads L2-normalised.
func (nt *net[F]) convRow(l, t int) {
	ls, La := nt.c.Linear, &nt.a.layers[l].lin
	w := nt.m.Layers[l].Lin.Conv
	k, cd := ls.ConvKernel, ls.ConvDim()
	y, x := La.y[t*cd:(t+1)*cd], La.qkv[t*cd:(t+1)*cd]
	for ch := range cd {
		var v F
		for j := range k {
			if p := t - k + 1 + j; p >= 0 {
				v += F(w[ch*k+j]) * La.c[p*cd+ch]
			}
		}
		y[ch] = v
		x[ch] = silu(v)
	}
	qk, dk := ls.QKDim(), ls.KeyDim
	scale := F(1 / math.Sqrt(float64(dk)))
	for h := range 2 * ls.KeyHeads {
		v := x[h*dk : (h+1)*dk]
		inv := F(1 / math.Sqrt(float64(dot(v, v))+1e-6))
		La.qkInv[t*2*ls.KeyHeads+h] = inv
		if h*dk < qk {
			inv *= scale
		}
		for j := range v {
			v[j] *= inv
		}
	}
}

// deltaForward runs value head h's delta rule over rows s, continuing
// lin.state (zero at row 0) and checkpointing it before every block-th
// row.
func (nt *net[F]) deltaForward(La *linActs[F], h int, s span) {
	ls := nt.c.Linear
	dk, dv := ls.KeyDim, ls.ValueDim
	st := dk * dv
	S := La.state[h*st : (h+1)*st]
	u := nt.lu[h*dv : (h+1)*dv]
	for t := s.lo; t < s.hi; t++ {
		if t == 0 {
			clear(S)
		}
		if t%La.block == 0 {
			b := t / La.block
			copy(La.ck[(b*ls.ValueHeads+h)*st:(b*ls.ValueHeads+h+1)*st], S)
		}
		q, k, v := linQKV(ls, La.qkv, t, h)
		i := t*ls.ValueHeads + h
		deltaStep(S, dk, dv, q, k, v, La.g[i], La.beta[i], La.o[t*ls.VDim()+h*dv:t*ls.VDim()+(h+1)*dv], u)
	}
}

// linQKV is value head h's query, key (its key head's) and value in row
// t of qkv.
func linQKV[F float](ls llama.LinearShape, qkv []F, t, h int) (q, k, v []F) {
	dk, dv, cd, qk := ls.KeyDim, ls.ValueDim, ls.ConvDim(), ls.QKDim()
	kh := keyHead(ls, h)
	x := qkv[t*cd : (t+1)*cd]
	return x[kh*dk : (kh+1)*dk], x[qk+kh*dk : qk+(kh+1)*dk], x[2*qk+h*dv : 2*qk+(h+1)*dv]
}

// keyHead is the key head value head j reads (llama.LinearShape's).
func keyHead(ls llama.LinearShape, j int) int {
	if ls.Tiled {
		return j % ls.KeyHeads
	}
	return j / (ls.ValueHeads / ls.KeyHeads)
}

// deltaStep is the delta rule for one token of one head, as inference
// computes it: S (KeyDim x ValueDim) becomes e^g·S + k·uᵀ with
// u = β·(v − e^g·Sᵀk), and out = Sᵀq of the new S; u is scratch.
func deltaStep[F float](S []F, dk, dv int, q, k, v []F, g, beta F, out, u []F) {
	e := F(math.Exp(float64(g)))
	clear(u)
	for i := range dk {
		axpy(k[i], S[i*dv:(i+1)*dv], u)
	}
	for j := range u {
		u[j] = beta * (v[j] - e*u[j])
	}
	clear(out)
	for i := range dk {
		row := S[i*dv : (i+1)*dv]
		for j := range row {
			row[j] = e*row[j] + k[i]*u[j]
		}
		axpy(q[i], row, out)
	}
}

func sigmoid[F float](x F) F { return F(1 / (1 + math.Exp(-float64(x)))) }

// softplus is log(1+e^x), linear above 20 as torch's.
func softplus[F float](x F) F {
	if x > 20 {
		return x
	}
	return F(math.Log1p(math.Exp(float64(x))))
}

// softplusGrad is d softplus(x)/dx: σ(x), 1 above 20.
func softplusGrad[F float](x F) F {
	if x > 20 {
		return 1
	}
	return sigmoid(x)
}
