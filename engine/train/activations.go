package train

import "github.com/kiln-ai/kiln/engine/llama"

// layerActs are the activations of one layer that the backward pass reads,
// for T positions: the layer's input, the normalised inputs of its two
// sub-blocks with their inverse root mean squares, the mixer's (attention
// or Gated DeltaNet) activations, the feed-forward pre-activations and
// product, and A·x of every targeted projection.
type layerActs[F float] struct {
	x, xn1, inv1   []F // T*Dim, T*Dim, T
	q, k, v        []F // T*QDim, T*KVDim, T*KVDim (q, k rotated)
	qpre, kpre     []F // before the per-head norm (QKNorm only)
	qinv, kinv     []F // T*Heads, T*KVHeads (QKNorm only)
	qg, og         []F // AttnGate only: the query projection T*2*QDim, the gated output T*QDim
	o, lse         []F // T*QDim, T*Heads
	lin            linActs[F]
	x1, xn2, inv2  []F // T*Dim, T*Dim, T
	g, u, h        []F // T*Hidden
	ax             [numModules][]F
	rank, capacity int
}

// linActs are a Gated DeltaNet layer's activations (deltanet.go): per row
// the projections before the convolution (c), after it (y, before SiLU),
// the normalised queries, keys and values (qkv) with the queries' and
// keys' inverse L2 norms, z, the gates' inputs and values, the delta
// rule's output with its inverse RMS per value head and the gated norm's
// output; and the delta rule's state, now and at every deltaBlock-th row
// (ck[b] is the state before row b·block).
type linActs[F float] struct {
	c, y, qkv    []F // T*ConvDim
	qkInv        []F // T*2*KeyHeads
	z, o, yn     []F // T*VDim
	a, beta, g   []F // T*ValueHeads: a + dt_bias, β, g
	oInv         []F // T*ValueHeads
	state, ck    []F // ValueHeads*KeyDim*ValueDim, blocks of it
	block, ckCap int // rows a checkpoint block, and the blocks ck holds
}

// acts are the activations of one training forward pass.
type acts[F float] struct {
	n      int // positions of the current sequence
	layers []layerActs[F]
	xf     []F // final normalised stream, T*Dim
	xL     []F // final residual stream, T*Dim
	invf   []F // T
}

// grow sizes a for n positions, reusing what it holds; block is the rows
// of a delta-rule checkpoint.
func (a *acts[F]) grow(c llama.Config, w *weights[F], n, block int) {
	a.n = n
	if len(a.layers) == c.Layers && a.layers[0].capacity >= n && (!c.Hybrid() || a.hasBlock(c, n, block)) {
		return
	}
	d, h := c.Dim, c.HiddenDim
	mk := func(k int) []F { return make([]F, n*k) }
	a.layers = make([]layerActs[F], c.Layers)
	for l := range a.layers {
		L := &a.layers[l]
		*L = layerActs[F]{
			x: mk(d), xn1: mk(d), inv1: mk(1), x1: mk(d), xn2: mk(d), inv2: mk(1),
			g: mk(h), u: mk(h), h: mk(h), rank: w.rank, capacity: n,
		}
		if c.IsLinear(l) {
			L.lin = newLinActs[F](c, n, block)
		} else {
			L.growAttention(c, n)
		}
		for m := range numModules {
			if w.layers[l][m].A != nil {
				L.ax[m] = mk(w.rank)
			}
		}
	}
	a.xf, a.xL, a.invf = mk(d), mk(d), mk(1)
}

// hasBlock reports whether the linear layers' checkpoints are of block
// rows and hold n rows' worth.
func (a *acts[F]) hasBlock(c llama.Config, n, block int) bool {
	for l := range c.Layers {
		if c.IsLinear(l) {
			L := &a.layers[l].lin
			return L.block == block && L.ckCap >= ckBlocks(n, block)
		}
	}
	return true
}

// growAttention allocates an attention layer's mixer activations.
func (L *layerActs[F]) growAttention(c llama.Config, n int) {
	q, kv := c.QDim(), c.KVDim()
	mk := func(k int) []F { return make([]F, n*k) }
	L.q, L.k, L.v, L.o, L.lse = mk(q), mk(kv), mk(kv), mk(q), mk(c.Heads)
	if c.QKNorm {
		L.qpre, L.kpre, L.qinv, L.kinv = mk(q), mk(kv), mk(c.Heads), mk(c.KVHeads)
	}
	if c.AttnGate {
		L.qg, L.og = mk(2*q), mk(q)
	}
}

func newLinActs[F float](c llama.Config, n, block int) linActs[F] {
	s := c.Linear
	cd, vd, vh := s.ConvDim(), s.VDim(), s.ValueHeads
	st := vh * s.KeyDim * s.ValueDim
	mk := func(k int) []F { return make([]F, n*k) }
	nb := ckBlocks(n, block)
	return linActs[F]{
		c: mk(cd), y: mk(cd), qkv: mk(cd), qkInv: mk(2 * s.KeyHeads),
		z: mk(vd), o: mk(vd), yn: mk(vd), a: mk(vh), beta: mk(vh), g: mk(vh), oInv: mk(vh),
		state: make([]F, st), ck: make([]F, nb*st), block: block, ckCap: nb,
	}
}

// ckBlocks is the number of checkpoint blocks of n rows.
func ckBlocks(n, block int) int { return (n + block - 1) / block }

// ActivationBytes is the memory, in bytes, of the activations one training
// step keeps for a sequence of n tokens with the given rank and targets
// (float32): linear in n. Per token, every layer keeps 4·Dim + 2 + 3·Hidden
// values and rank for each of its targeted projections; an attention layer
// 2·QDim + 2·KVDim + Heads more (QKNorm: QDim + KVDim + Heads + KVHeads;
// AttnGate: 3·QDim); a Gated DeltaNet layer 3·ConvDim + 2·KeyHeads +
// 3·VDim + 4·ValueHeads, and its delta-rule state once plus once every
// deltaBlock tokens (ValueHeads·KeyDim·ValueDim each). The backward
// pass's scratch adds a constant number of rows of the same widths
// (gradients of one layer) and deltaBlock+1 states, also linear in n.
func ActivationBytes(c llama.Config, rank int, targets []Module, n int) int64 {
	d, q, kv, h := int64(c.Dim), int64(c.QDim()), int64(c.KVDim()), int64(c.HiddenDim)
	s := c.Linear
	total := (2*d + 1) * int64(n)
	for l := range c.Layers {
		per := 4*d + 2 + 3*h
		for _, m := range targets {
			if hasModule(c, l, m) {
				per += int64(rank)
			}
		}
		if c.IsLinear(l) {
			per += 3*int64(s.ConvDim()) + 2*int64(s.KeyHeads) + 3*int64(s.VDim()) + 4*int64(s.ValueHeads)
			st := int64(s.ValueHeads * s.KeyDim * s.ValueDim)
			total += st * int64(1+ckBlocks(n, deltaBlock))
		} else {
			per += 2*q + 2*kv + int64(c.Heads)
			if c.QKNorm {
				per += q + kv + int64(c.Heads+c.KVHeads)
			}
			if c.AttnGate {
				per += 3 * q
			}
		}
		total += per * int64(n)
	}
	return 4 * total
}
