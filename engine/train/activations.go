package train

import "github.com/kiln-ai/kiln/engine/llama"

// layerActs are the activations of one layer that the backward pass reads,
// for T positions: the layer's input, the normalised inputs of its two
// sub-blocks with their inverse root mean squares, the queries and keys
// after RoPE, the values, the attention output with each row's log-sum-exp
// per head, the feed-forward pre-activations and product, and A·x of every
// targeted projection.
type layerActs[F float] struct {
	x, xn1, inv1   []F // T*Dim, T*Dim, T
	q, k, v        []F // T*QDim, T*KVDim, T*KVDim (q, k rotated)
	qpre, kpre     []F // before the per-head norm (QKNorm only)
	qinv, kinv     []F // T*Heads, T*KVHeads (QKNorm only)
	o, lse         []F // T*QDim, T*Heads
	x1, xn2, inv2  []F // T*Dim, T*Dim, T
	g, u, h        []F // T*Hidden
	ax             [numModules][]F
	rank, capacity int
}

// acts are the activations of one training forward pass.
type acts[F float] struct {
	n      int // positions of the current sequence
	layers []layerActs[F]
	xf     []F // final normalised stream, T*Dim
	xL     []F // final residual stream, T*Dim
	invf   []F // T
}

// grow sizes a for n positions, reusing what it holds.
func (a *acts[F]) grow(c llama.Config, w *weights[F], n int) {
	a.n = n
	if len(a.layers) == c.Layers && a.layers[0].capacity >= n {
		return
	}
	d, q, kv, h := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	mk := func(k int) []F { return make([]F, n*k) }
	a.layers = make([]layerActs[F], c.Layers)
	for l := range a.layers {
		L := &a.layers[l]
		*L = layerActs[F]{
			x: mk(d), xn1: mk(d), inv1: mk(1), q: mk(q), k: mk(kv), v: mk(kv),
			o: mk(q), lse: mk(c.Heads), x1: mk(d), xn2: mk(d), inv2: mk(1),
			g: mk(h), u: mk(h), h: mk(h), rank: w.rank, capacity: n,
		}
		if c.QKNorm {
			L.qpre, L.kpre, L.qinv, L.kinv = mk(q), mk(kv), mk(c.Heads), mk(c.KVHeads)
		}
		for m := range numModules {
			if w.layers[l][m].A != nil {
				L.ax[m] = mk(w.rank)
			}
		}
	}
	a.xf, a.xL, a.invf = mk(d), mk(d), mk(1)
}

// ActivationBytes is the memory, in bytes, of the activations one training
// step keeps for a sequence of n tokens with the given rank and targets
// (float32): linear in n. The backward pass's scratch adds a constant
// number of rows of the same widths (gradients of one layer), also linear
// in n.
func ActivationBytes(c llama.Config, rank int, targets []Module, n int) int64 {
	d, q, kv, h := int64(c.Dim), int64(c.QDim()), int64(c.KVDim()), int64(c.HiddenDim)
	per := 4*d + 2 + 2*q + 2*kv + int64(c.Heads) + 3*h + int64(rank*len(targets))
	if c.QKNorm {
		per += q + kv + int64(c.Heads+c.KVHeads)
	}
	total := per*int64(c.Layers) + 2*d + 1
	return 4 * total * int64(n)
}
