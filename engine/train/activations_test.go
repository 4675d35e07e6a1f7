package train

import (
	"testing"

	"github.com/kiln-ai/kiln/kernels"
)

// actBytes sums the float32 activations a net holds.
func actBytes(a *acts[float32]) int64 {
	var n int
	for _, L := range a.layers {
		for _, s := range [][]float32{L.x, L.xn1, L.inv1, L.q, L.k, L.v, L.qpre, L.kpre, L.qinv, L.kinv, L.o, L.lse, L.x1, L.xn2, L.inv2, L.g, L.u, L.h} {
			n += len(s)
		}
		for _, s := range L.ax {
			n += len(s)
		}
		li := &L.lin
		for _, s := range [][]float32{L.qg, L.og, li.c, li.y, li.qkv, li.qkInv, li.z, li.o, li.yn, li.a, li.beta, li.g, li.oInv, li.state, li.ck} {
			n += len(s)
		}
	}
	n += len(a.xf) + len(a.xL) + len(a.invf)
	return 4 * int64(n)
}

// TestActivationBytes: what a step keeps is exactly ActivationBytes, which
// is linear in the tokens (no T x T attention matrix, no T x Vocab logits).
func TestActivationBytes(t *testing.T) {
	pool := kernels.NewPool(1)
	defer pool.Close()
	for _, ac := range archCases() {
		m := newCaseModel(t, ac)
		cfg := DefaultConfig()
		cfg.LoraRank = 3
		tr, err := New(m, pool, cfg)
		if err != nil {
			t.Fatal(err)
		}
		mods := tr.Adapter().Targets // a hybrid's defaults add its linear projections
		for _, n := range []int{8, 16, 32} {
			ids, target := sequenceCase(m.Config, n, 1)
			if _, err := tr.Step(Sequence{IDs: ids, Target: target}); err != nil {
				t.Fatal(err)
			}
			if got, want := actBytes(&tr.net.a), ActivationBytes(m.Config, 3, mods, n); got != want {
				t.Errorf("%s, %d tokens: activations hold %d bytes, ActivationBytes says %d", ac.name, n, got, want)
			}
		}
		// A hybrid adds a delta-rule state a layer and one a block of
		// deltaBlock rows: linear at multiples of the block.
		one, two := ActivationBytes(m.Config, 3, mods, 128), ActivationBytes(m.Config, 3, mods, 256)
		if m.Config.Hybrid() {
			ls := m.Config.Linear
			st := int64(4 * ls.ValueHeads * ls.KeyDim * ls.ValueDim * (m.Config.Layers - m.Config.AttnLayers()))
			one, two = one-st, two-st
		}
		if two != 2*one {
			t.Errorf("%s: ActivationBytes not linear: %d for 100 tokens, %d for 200", ac.name, one, two)
		}
	}
}
