package train

import "github.com/kiln-ai/kiln/kernels"

// backScratch holds the gradients of one layer's activations (T rows each)
// and the classifier's chunk buffers.
type backScratch[F float] struct {
	dx, dx1, dxn, dxf []F // T*Dim
	dq, do            []F // T*QDim
	dk, dv            []F // T*KVDim
	dh, dg, du        []F // T*Hidden
	gr                []F // T*rank: Bᵀ·dy of one projection
	head              []F // HeadDim
	dqg               []F // T*2*QDim: the gated query projection's gradient (AttnGate)
	lin               linBackScratch[F]
	logits, xc, dxc   []F
	rows              int
}

func (b *backScratch[F]) grow(nt *net[F], n int) {
	if b.rows >= n && (!nt.c.Hybrid() || b.lin.block == nt.block()) {
		return
	}
	c := nt.c
	d, q, kv, h := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	mk := func(k int) []F { return make([]F, n*k) }
	b.dx, b.dx1, b.dxn, b.dxf = mk(d), mk(d), mk(d), mk(d)
	b.dq, b.do, b.dk, b.dv = mk(q), mk(q), mk(kv), mk(kv)
	b.dh, b.dg, b.du = mk(h), mk(h), mk(h)
	b.gr, b.head = mk(nt.w.rank), make([]F, c.HeadDim())
	if c.AttnGate {
		b.dqg = mk(2 * q)
	}
	if c.Hybrid() {
		b.lin = newLinBackScratch[F](c.Linear, n, nt.block())
	}
	b.rows = n
}

// lossAndGrad runs the forward and backward pass of one sequence and leaves
// the gradients of every LoRA parameter in nt.g. It returns the mean
// cross-entropy over the target tokens and their number.
func (nt *net[F]) lossAndGrad(ids []int, target []bool) (float64, int) {
	pa := nt.begin(ids, target, true)
	pa.finish()
	return pa.loss, len(pa.rows)
}

// finalNormBack sets rows s of bs.dx, the gradient of the last layer's
// output, from bs.dxf through the final norm.
func (nt *net[F]) finalNormBack(s span) {
	d, b := nt.c.Dim, &nt.bs
	clear(rowsOf(b.dx, s, d))
	for t := s.lo; t < s.hi; t++ {
		rmsNormBack(b.dx[t*d:(t+1)*d], nt.a.xL[t*d:(t+1)*d], b.dxf[t*d:(t+1)*d], nt.m.Norm, nt.a.invf[t])
	}
}

// A layer's backward turns bs.dx, the gradient of its output, into the
// gradient of its input, adding the layer's LoRA gradients to nt.g, in
// three phases of row chunks: ffnBack (every row's feed-forward and output
// projection, row by row), attentionBack (which completes the key and value
// gradients only after its last query row) and qkvBack (row by row again).
// Each LoRA gradient sums its rows in ascending order in every phase, so
// the sums do not depend on where the chunks are cut.

// ffnBack runs rows s of layer l's backward from its output to the
// attention output: bs.dx1 (the gradient of the residual after attention)
// and bs.do, and clears those rows of bs.dq, bs.dk and bs.dv for
// attentionBack to add to.
func (nt *net[F]) ffnBack(l int, s span) {
	c, L, A, b := nt.c, &nt.m.Layers[l], &nt.a.layers[l], &nt.bs
	d, q, kv, hd := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	dx, dx1, dxn := rowsOf(b.dx, s, d), rowsOf(b.dx1, s, d), rowsOf(b.dxn, s, d)
	dh, dg, du := rowsOf(b.dh, s, hd), rowsOf(b.dg, s, hd), rowsOf(b.du, s, hd)
	ag, au := rowsOf(A.g, s, hd), rowsOf(A.u, s, hd)

	clear(dh)
	nt.linearBack(l, ModDown, &L.W2, rowsOf(A.h, s, hd), dx, dh, s)
	for i := range dh {
		dg[i] = dh[i] * au[i] * siluGrad(ag[i])
		du[i] = dh[i] * silu(ag[i])
	}
	clear(dxn)
	xn2 := rowsOf(A.xn2, s, d)
	nt.linearBack(l, ModGate, &L.W1, xn2, dg, dxn, s)
	nt.linearBack(l, ModUp, &L.W3, xn2, du, dxn, s)
	copy(dx1, dx)
	for t := s.lo; t < s.hi; t++ {
		rmsNormBack(b.dx1[t*d:(t+1)*d], A.x1[t*d:(t+1)*d], b.dxn[t*d:(t+1)*d], L.FFNNorm, A.inv2[t])
	}
	if c.IsLinear(l) {
		nt.linOutBack(l, s)
		return
	}
	do := rowsOf(b.do, s, q)
	clear(do)
	if c.AttnGate {
		nt.linearBack(l, ModO, &L.WO, rowsOf(A.og, s, q), dx1, do, s)
		nt.gateBack(A, s)
	} else {
		nt.linearBack(l, ModO, &L.WO, rowsOf(A.o, s, q), dx1, do, s)
	}
	clear(rowsOf(b.dq, s, q))
	clear(rowsOf(b.dk, s, kv))
	clear(rowsOf(b.dv, s, kv))
}

// gateBack turns rows s of bs.do, the gradient of the gated attention
// output o·σ(gate), into the gradient of o, and writes the gates'
// gradients into their places in bs.dqg.
func (nt *net[F]) gateBack(A *layerActs[F], s span) {
	c, b := nt.c, &nt.bs
	hs := c.HeadDim()
	for i := s.lo * c.Heads; i < s.hi*c.Heads; i++ {
		gate, dgate := A.qg[(2*i+1)*hs:(2*i+2)*hs], b.dqg[(2*i+1)*hs:(2*i+2)*hs]
		o, do := A.o[i*hs:(i+1)*hs], b.do[i*hs:(i+1)*hs]
		for j, g := range gate {
			sg := sigmoid(g)
			dgate[j] = do[j] * o[j] * sg * (1 - sg)
			do[j] *= sg
		}
	}
}

// qkvBack runs rows s of layer l's backward from the complete query, key
// and value gradients to bs.dx, the gradient of the layer's input.
func (nt *net[F]) qkvBack(l int, s span) {
	c, L, A, b := nt.c, &nt.m.Layers[l], &nt.a.layers[l], &nt.bs
	d, q, kv := c.Dim, c.QDim(), c.KVDim()
	dk, dv := rowsOf(b.dk, s, kv), rowsOf(b.dv, s, kv)
	for t := s.lo; t < s.hi; t++ {
		nt.rope.apply(b.dq[t*q:(t+1)*q], t, true)
		nt.rope.apply(b.dk[t*kv:(t+1)*kv], t, true)
	}
	if c.QKNorm {
		nt.headNormBack(b.dq, A.qpre, A.qinv, L.QNorm, c.Heads, s)
		nt.headNormBack(b.dk, A.kpre, A.kinv, L.KNorm, c.KVHeads, s)
	}
	dxn, xn1 := rowsOf(b.dxn, s, d), rowsOf(A.xn1, s, d)
	clear(dxn)
	if c.AttnGate {
		hs := c.HeadDim()
		for i := s.lo * c.Heads; i < s.hi*c.Heads; i++ {
			copy(b.dqg[2*i*hs:(2*i+1)*hs], b.dq[i*hs:(i+1)*hs])
		}
		nt.linearBack(l, ModQ, &L.WQ, xn1, rowsOf(b.dqg, s, 2*q), dxn, s)
	} else {
		nt.linearBack(l, ModQ, &L.WQ, xn1, rowsOf(b.dq, s, q), dxn, s)
	}
	nt.linearBack(l, ModK, &L.WK, xn1, dk, dxn, s)
	nt.linearBack(l, ModV, &L.WV, xn1, dv, dxn, s)
	copy(rowsOf(b.dx, s, d), rowsOf(b.dx1, s, d))
	for t := s.lo; t < s.hi; t++ {
		rmsNormBack(b.dx[t*d:(t+1)*d], A.x[t*d:(t+1)*d], b.dxn[t*d:(t+1)*d], L.AttnNorm, A.inv1[t])
	}
}

// headNormBack replaces rows s of dv (rows of heads heads) by their
// gradient through the per-head RMSNorm whose inputs were pre and inverse
// RMS inv.
func (nt *net[F]) headNormBack(dv, pre, inv []F, w []float32, heads int, s span) {
	hs := nt.c.HeadDim()
	tmp := nt.bs.head
	for i := s.lo * heads; i < s.hi*heads; i++ {
		seg := dv[i*hs : (i+1)*hs]
		copy(tmp, seg)
		clear(seg)
		rmsNormBack(seg, pre[i*hs:(i+1)*hs], tmp, w, inv[i])
	}
}

// linearBack adds Wᵀ·dy (and, when mod is targeted, scale·Aᵀ·Bᵀ·dy) to dx
// for rows s (x, dy and dx hold those rows only), and adds the gradients of
// the pair's A and B to nt.g: dB += scale·dy·(A·x)ᵀ, dA += scale·(Bᵀ·dy)·xᵀ,
// a row at a time in ascending order.
func (nt *net[F]) linearBack(l int, mod Module, w *kernels.Matrix, x, dy, dx []F, s span) {
	n := s.n()
	nt.la.matmulT(dx, w, dy, n)
	p, g := &nt.w.layers[l][mod], &nt.g.layers[l][mod]
	if p.A == nil {
		return
	}
	r, sc := nt.w.rank, nt.w.scale
	ax := rowsOf(nt.a.layers[l].ax[mod], s, r)
	for t := range n {
		gt, at := nt.bs.gr[t*r:(t+1)*r], ax[t*r:(t+1)*r]
		clear(gt)
		dyt := dy[t*p.out : (t+1)*p.out]
		for o, v := range dyt {
			if v != 0 {
				axpy(v, p.B[o*r:(o+1)*r], gt)
				axpy(sc*v, at, g.B[o*r:(o+1)*r])
			}
		}
		xt, dxt := x[t*p.in:(t+1)*p.in], dx[t*p.in:(t+1)*p.in]
		for j, v := range gt {
			if v != 0 {
				axpy(sc*v, xt, g.A[j*p.in:(j+1)*p.in])
				axpy(sc*v, p.A[j*p.in:(j+1)*p.in], dxt)
			}
		}
	}
}
