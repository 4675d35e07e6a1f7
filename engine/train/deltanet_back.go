package train

import (
	"math"

	"github.com/kiln-ai/kiln/engine/llama"
)

// A linear layer's backward runs in three phases: ffnBack (the feed-forward
// as on every layer, then linOutBack: the output projection and the gated
// norm, row by row), deltaBack (the delta rule backward in time, one
// checkpoint block a unit, the last block first, then each row of the
// block back through the L2 norms, SiLU, the convolution and the gates,
// in descending order) and linBack (the input projections, row by row).
// A row's convolution gradient sums the terms of the rows after it, which
// deltaBack has all run when linBack reads it; every sum runs in an order
// fixed by the rows and heads alone, so the gradients do not depend on
// where chunks or slices are cut.
//
// The delta rule's reverse recurrence, for one head at time t with
// S_t = e^g·S_{t−1} + k·uᵀ, u = β·(v − e^g·S_{t−1}ᵀk), o_t = S_tᵀq, and
// dS the gradient of S_t from the later rows: dS += q·doᵀ; dq = S_t·do;
// du = dSᵀk; dk = dS·u; dv = β·du; dβ = du·(v − e^g·S_{t−1}ᵀk); with
// dp = −β·du, dS += k·dpᵀ and dk += e^g·S_{t−1}·dp; dg = e^g·⟨dS,
// S_{t−1}⟩; and the gradient of S_{t−1} is e^g·dS.

// linBackScratch holds the gradients of one linear layer's activations
// and the delta rule's backward state.
type linBackScratch[F float] struct {
	dyn, dz, do []F // T*VDim: the gated norm's output, z, the delta rule's output
	dqkv, dc    []F // T*ConvDim: the normalised q, k, v; the projections before the convolution
	dbeta, dg   []F // T*ValueHeads: β and g, then the projections' b and a
	dS          []F // ValueHeads states: the gradient of the state
	blk         []F // ValueHeads x (block+1) states, recomputed from a checkpoint
	vec         []F // ValueHeads x 4·ValueDim
	dy          []F // ConvDim: one row's convolution output gradient
	block       int
}

func newLinBackScratch[F float](s llama.LinearShape, n, block int) linBackScratch[F] {
	st := s.ValueHeads * s.KeyDim * s.ValueDim
	mk := func(k int) []F { return make([]F, n*k) }
	cd, vd, vh := s.ConvDim(), s.VDim(), s.ValueHeads
	return linBackScratch[F]{
		dyn: mk(vd), dz: mk(vd), do: mk(vd), dqkv: mk(cd), dc: mk(cd), dbeta: mk(vh), dg: mk(vh),
		dS: make([]F, st), blk: make([]F, (block+1)*st), vec: make([]F, 4*vd), dy: make([]F, cd), block: block,
	}
}

// linOutBack runs rows s of linear layer l's backward from bs.dx1 through
// the output projection and the gated norm to lin.do and lin.dz, and
// clears those rows of lin.dqkv and lin.dc for deltaBack to add to.
func (nt *net[F]) linOutBack(l int, s span) {
	c, D, A, B := nt.c, nt.m.Layers[l].Lin, &nt.a.layers[l], &nt.bs.lin
	ls, La := c.Linear, &A.lin
	vd, dv, vh, cd := ls.VDim(), ls.ValueDim, ls.ValueHeads, ls.ConvDim()
	dyn := rowsOf(B.dyn, s, vd)
	clear(dyn)
	nt.linearBack(l, ModLinOut, &D.WOut, rowsOf(La.yn, s, vd), rowsOf(nt.bs.dx1, s, c.Dim), dyn, s)
	for t := s.lo; t < s.hi; t++ {
		for h := range vh {
			i := t*vd + h*dv
			o, z, dy, dz, do := La.o[i:i+dv], La.z[i:i+dv], B.dyn[i:i+dv], B.dz[i:i+dv], B.do[i:i+dv]
			inv := La.oInv[t*vh+h]
			for j, zv := range z {
				dz[j] = dy[j] * o[j] * inv * F(D.Norm[j]) * siluGrad(zv)
				dy[j] *= silu(zv)
			}
			clear(do)
			rmsNormBack(do, o, dy, D.Norm, inv)
		}
	}
	clear(rowsOf(B.dqkv, s, cd))
	clear(rowsOf(B.dc, s, cd))
}

// deltaBack runs the delta rule of linear layer l backward over the
// checkpoint block blk (the blocks after it done), then its rows back to
// the convolution's input.
func (nt *net[F]) deltaBack(l int, blk span) {
	ls, La, B := nt.c.Linear, &nt.a.layers[l].lin, &nt.bs.lin
	if blk.hi == nt.a.n {
		clear(B.dS)
	}
	// The value heads of a key head share its query and key gradients:
	// one worker runs them all, in ascending order.
	nt.la.pool.Run(ls.KeyHeads, func(lo, hi int) {
		for kh := lo; kh < hi; kh++ {
			for h := range ls.ValueHeads {
				if keyHead(ls, h) == kh {
					nt.deltaHeadBack(La, B, h, blk)
				}
			}
		}
	})
	for t := blk.hi - 1; t >= blk.lo; t-- {
		nt.linRowBack(l, t)
	}
}

// deltaHeadBack recomputes value head h's states over blk from its
// checkpoint and runs the reverse recurrence through them, adding to the
// head's query, key and value gradients in lin.dqkv and setting its β
// and g gradients.
func (nt *net[F]) deltaHeadBack(La *linActs[F], B *linBackScratch[F], h int, blk span) {
	ls := nt.c.Linear
	dk, dv, vh := ls.KeyDim, ls.ValueDim, ls.ValueHeads
	st := dk * dv
	b := blk.lo / La.block
	sb := B.blk[h*(B.block+1)*st : (h+1)*(B.block+1)*st]
	vec := B.vec[h*4*dv : (h+1)*4*dv]
	u, out, pred, du := vec[:dv], vec[dv:2*dv], vec[2*dv:3*dv], vec[3*dv:]
	copy(sb[:st], La.ck[(b*vh+h)*st:(b*vh+h+1)*st])
	for t := blk.lo; t < blk.hi; t++ {
		i := t - blk.lo
		cur := sb[(i+1)*st : (i+2)*st]
		copy(cur, sb[i*st:(i+1)*st])
		q, k, v := linQKV(ls, La.qkv, t, h)
		deltaStep(cur, dk, dv, q, k, v, La.g[t*vh+h], La.beta[t*vh+h], out, u)
	}
	dS := B.dS[h*st : (h+1)*st]
	for t := blk.hi - 1; t >= blk.lo; t-- {
		i := t - blk.lo
		x := deltaRow[F]{prev: sb[i*st : (i+1)*st], cur: sb[(i+1)*st : (i+2)*st], dk: dk, dv: dv}
		x.q, x.k, x.v = linQKV(ls, La.qkv, t, h)
		x.dq, x.dkey, x.dval = linQKV(ls, B.dqkv, t, h)
		j := t*vh + h
		x.do = B.do[t*ls.VDim()+h*dv : t*ls.VDim()+(h+1)*dv]
		B.dbeta[j], B.dg[j] = x.back(dS, La.g[j], La.beta[j], pred, u, du)
	}
}

// deltaRow is one token of one head for the delta rule's backward: the
// states before and after it, its inputs and their gradients.
type deltaRow[F float] struct {
	prev, cur      []F
	q, k, v, do    []F
	dq, dkey, dval []F
	dk, dv         int
}

// back turns dS, the gradient of the state after the token, into that of
// the state before it, adds the token's query and key gradients, sets its
// value gradient and returns those of β and g (pred, u, du: scratch).
func (x *deltaRow[F]) back(dS []F, g, beta F, pred, u, du []F) (dbeta, dg F) {
	dk, dv := x.dk, x.dv
	e := F(math.Exp(float64(g)))
	for i := range dk {
		drow := dS[i*dv : (i+1)*dv]
		x.dq[i] += dot(x.cur[i*dv:(i+1)*dv], x.do)
		axpy(x.q[i], x.do, drow)
	}
	clear(pred)
	for i := range dk {
		axpy(x.k[i], x.prev[i*dv:(i+1)*dv], pred)
	}
	for j := range pred {
		pred[j] *= e
		u[j] = beta * (x.v[j] - pred[j])
	}
	clear(du)
	for i := range dk {
		drow := dS[i*dv : (i+1)*dv]
		axpy(x.k[i], drow, du)
		x.dkey[i] += dot(drow, u)
	}
	for j, d := range du {
		x.dval[j] = beta * d
		dbeta += d * (x.v[j] - pred[j])
		du[j] = -beta * d
	}
	for i := range dk {
		drow, prow := dS[i*dv:(i+1)*dv], x.prev[i*dv:(i+1)*dv]
		axpy(x.k[i], du, drow)
		x.dkey[i] += e * dot(prow, du)
		dg += e * dot(drow, prow)
		for j := range drow {
			drow[j] *= e
		}
	}
	return dbeta, dg
}

// linRowBack runs row t of linear layer l back from the gradients of its
// normalised queries, keys and values through the L2 norms and SiLU to
// the convolution's output, adds that through the convolution to the
// gradients of rows t−ConvKernel+1..t of lin.dc, and turns the row's β and
// g gradients into those of the b and a projections.
func (nt *net[F]) linRowBack(l int, t int) {
	ls, La, B, D := nt.c.Linear, &nt.a.layers[l].lin, &nt.bs.lin, nt.m.Layers[l].Lin
	cd, dk, kh, K := ls.ConvDim(), ls.KeyDim, ls.KeyHeads, ls.ConvKernel
	y, dx, dy := La.y[t*cd:(t+1)*cd], B.dqkv[t*cd:(t+1)*cd], B.dy
	scale := F(1 / math.Sqrt(float64(dk)))
	for h := range 2 * kh {
		sc := F(1)
		if h < kh {
			sc = scale
		}
		inv := La.qkInv[t*2*kh+h]
		var s F
		for j := h * dk; j < (h+1)*dk; j++ {
			s += silu(y[j]) * dx[j]
		}
		for j := h * dk; j < (h+1)*dk; j++ {
			dy[j] = sc * (inv*dx[j] - silu(y[j])*inv*inv*inv*s)
		}
	}
	copy(dy[2*kh*dk:], dx[2*kh*dk:])
	for ch, yv := range y {
		d := dy[ch] * siluGrad(yv)
		for j := range K {
			if p := t - K + 1 + j; p >= 0 {
				B.dc[p*cd+ch] += F(D.Conv[ch*K+j]) * d
			}
		}
	}
	for h := range ls.ValueHeads {
		i := t*ls.ValueHeads + h
		b := La.beta[i]
		B.dbeta[i] *= b * (1 - b)
		B.dg[i] *= F(D.A[h]) * softplusGrad(La.a[i])
	}
}

// linBack runs rows s of linear layer l's backward from the complete
// gradients of its projections to bs.dx, the gradient of the layer's
// input.
func (nt *net[F]) linBack(l int, s span) {
	c, L, A, b := nt.c, &nt.m.Layers[l], &nt.a.layers[l], &nt.bs
	ls, D, B := c.Linear, L.Lin, &b.lin
	d, n := c.Dim, s.n()
	dxn, xn1 := rowsOf(b.dxn, s, d), rowsOf(A.xn1, s, d)
	clear(dxn)
	nt.linearBack(l, ModLinQKV, &D.WQKV, xn1, rowsOf(B.dc, s, ls.ConvDim()), dxn, s)
	nt.linearBack(l, ModLinZ, &D.WZ, xn1, rowsOf(B.dz, s, ls.VDim()), dxn, s)
	nt.la.matmulT(dxn, &D.WB, rowsOf(B.dbeta, s, ls.ValueHeads), n)
	nt.la.matmulT(dxn, &D.WA, rowsOf(B.dg, s, ls.ValueHeads), n)
	copy(rowsOf(b.dx, s, d), rowsOf(b.dx1, s, d))
	for t := s.lo; t < s.hi; t++ {
		rmsNormBack(b.dx[t*d:(t+1)*d], A.x[t*d:(t+1)*d], b.dxn[t*d:(t+1)*d], L.AttnNorm, A.inv1[t])
	}
}
