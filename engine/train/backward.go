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
	logits, xc, dxc   []F
	rows              int
}

func (b *backScratch[F]) grow(nt *net[F], n int) {
	if b.rows >= n {
		return
	}
	c := nt.c
	d, q, kv, h := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	mk := func(k int) []F { return make([]F, n*k) }
	b.dx, b.dx1, b.dxn, b.dxf = mk(d), mk(d), mk(d), mk(d)
	b.dq, b.do, b.dk, b.dv = mk(q), mk(q), mk(kv), mk(kv)
	b.dh, b.dg, b.du = mk(h), mk(h), mk(h)
	b.gr, b.head = mk(nt.w.rank), make([]F, c.HeadDim())
	b.rows = n
}

// lossAndGrad runs the forward and backward pass of one sequence and leaves
// the gradients of every LoRA parameter in nt.g. It returns the mean
// cross-entropy over the target tokens and their number.
func (nt *net[F]) lossAndGrad(ids []int, target []bool) (float64, int) {
	n := len(ids)
	nt.forward(ids)
	nt.bs.grow(nt, n)
	nt.g.each(func(p []F) { clear(p) })
	b := &nt.bs
	loss, count := nt.lossBack(ids, target, b.dxf)
	if count == 0 {
		return 0, 0
	}
	d := nt.c.Dim
	dx := b.dx[:n*d]
	clear(dx)
	for t := range n {
		rmsNormBack(dx[t*d:(t+1)*d], nt.a.xL[t*d:(t+1)*d], b.dxf[t*d:(t+1)*d], nt.m.Norm, nt.a.invf[t])
	}
	for l := len(nt.a.layers) - 1; l >= 0; l-- {
		nt.layerBack(l)
	}
	return loss, count
}

// layerBack turns bs.dx, the gradient of layer l's output, into the
// gradient of its input, adding the layer's LoRA gradients to nt.g.
func (nt *net[F]) layerBack(l int) {
	c, L, A, b := nt.c, &nt.m.Layers[l], &nt.a.layers[l], &nt.bs
	n, d, q, kv, hd := nt.a.n, c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	dx, dx1, dxn := b.dx[:n*d], b.dx1[:n*d], b.dxn[:n*d]
	dh, dg, du := b.dh[:n*hd], b.dg[:n*hd], b.du[:n*hd]

	clear(dh)
	nt.linearBack(l, ModDown, &L.W2, A.h, dx, dh)
	for i := range dh {
		dg[i] = dh[i] * A.u[i] * siluGrad(A.g[i])
		du[i] = dh[i] * silu(A.g[i])
	}
	clear(dxn)
	nt.linearBack(l, ModGate, &L.W1, A.xn2, dg, dxn)
	nt.linearBack(l, ModUp, &L.W3, A.xn2, du, dxn)
	copy(dx1, dx)
	for t := range n {
		rmsNormBack(dx1[t*d:(t+1)*d], A.x1[t*d:(t+1)*d], dxn[t*d:(t+1)*d], L.FFNNorm, A.inv2[t])
	}

	do, dq, dk, dv := b.do[:n*q], b.dq[:n*q], b.dk[:n*kv], b.dv[:n*kv]
	clear(do)
	nt.linearBack(l, ModO, &L.WO, A.o, dx1, do)
	clear(dq)
	clear(dk)
	clear(dv)
	nt.attentionBack(A, do, dq, dk, dv)
	for t := range n {
		nt.rope.apply(dq[t*q:(t+1)*q], t, true)
		nt.rope.apply(dk[t*kv:(t+1)*kv], t, true)
	}
	if c.QKNorm {
		nt.headNormBack(dq, A.qpre, A.qinv, L.QNorm, c.Heads)
		nt.headNormBack(dk, A.kpre, A.kinv, L.KNorm, c.KVHeads)
	}
	clear(dxn)
	nt.linearBack(l, ModQ, &L.WQ, A.xn1, dq, dxn)
	nt.linearBack(l, ModK, &L.WK, A.xn1, dk, dxn)
	nt.linearBack(l, ModV, &L.WV, A.xn1, dv, dxn)
	copy(dx, dx1)
	for t := range n {
		rmsNormBack(dx[t*d:(t+1)*d], A.x[t*d:(t+1)*d], dxn[t*d:(t+1)*d], L.AttnNorm, A.inv1[t])
	}
}

// headNormBack replaces dv (T rows of heads heads) by its gradient through
// the per-head RMSNorm whose inputs were pre and inverse RMS inv.
func (nt *net[F]) headNormBack(dv, pre, inv []F, w []float32, heads int) {
	hs := nt.c.HeadDim()
	tmp := nt.bs.head
	for i := range nt.a.n * heads {
		seg := dv[i*hs : (i+1)*hs]
		copy(tmp, seg)
		clear(seg)
		rmsNormBack(seg, pre[i*hs:(i+1)*hs], tmp, w, inv[i])
	}
}

// linearBack adds Wᵀ·dy (and, when mod is targeted, scale·Aᵀ·Bᵀ·dy) to dx
// for the a.n rows, and adds the gradients of the pair's A and B to nt.g:
// dB += scale·dy·(A·x)ᵀ, dA += scale·(Bᵀ·dy)·xᵀ.
func (nt *net[F]) linearBack(l int, mod Module, w *kernels.Matrix, x, dy, dx []F) {
	n := nt.a.n
	nt.la.matmulT(dx, w, dy, n)
	p, g := &nt.w.layers[l][mod], &nt.g.layers[l][mod]
	if p.A == nil {
		return
	}
	r, s := nt.w.rank, nt.w.scale
	ax := nt.a.layers[l].ax[mod]
	for t := range n {
		gt, at := nt.bs.gr[t*r:(t+1)*r], ax[t*r:(t+1)*r]
		clear(gt)
		dyt := dy[t*p.out : (t+1)*p.out]
		for o, v := range dyt {
			if v != 0 {
				axpy(v, p.B[o*r:(o+1)*r], gt)
				axpy(s*v, at, g.B[o*r:(o+1)*r])
			}
		}
		xt, dxt := x[t*p.in:(t+1)*p.in], dx[t*p.in:(t+1)*p.in]
		for j, v := range gt {
			if v != 0 {
				axpy(s*v, xt, g.A[j*p.in:(j+1)*p.in])
				axpy(s*v, p.A[j*p.in:(j+1)*p.in], dxt)
			}
		}
	}
}
