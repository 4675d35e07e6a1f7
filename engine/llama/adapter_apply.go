package llama

import (
	"fmt"

	"github.com/kiln-ai/kiln/kernels"
)

// loraState is a State's adapter and the scratch of its low-rank terms,
// grown like the rest of the State's scratch and never shrunk.
type loraState struct {
	adapter *Adapter

	u []float32 // A·x of up to three projections of one input: 3 x rows x r
	t []float32 // B·(A·x) of one projection: rows x its output width

	// Arguments of the fused A products, kept here so that passing them
	// allocates nothing; idx maps each back to its place in the caller's
	// set.
	outs [3][]float32
	ws   [3]*kernels.Matrix
	idx  [3]int
}

// SetAdapter makes Forward apply a (nil: the base model) from its next
// call on. It must be called between Forwards (the engine's actor does),
// and a must have been loaded for the State's model; anything else is a
// caller bug and panics.
func (s *State) SetAdapter(a *Adapter) {
	if a != nil && a.model != s.m {
		panic(fmt.Sprintf("llama: SetAdapter: adapter %s was loaded for another model", a.Info.SHA256))
	}
	s.lora.adapter = a
}

// Adapter is the adapter Forward applies, nil for the base model.
func (s *State) Adapter() *Adapter { return s.lora.adapter }

// addLoRA adds the adapter's term scale·B·(A·in) of kind k in layer l to
// out, for n rows (in: n x the projection's input width; out: n x its
// output width). Nothing happens without an adapter or when it does not
// target k.
func (s *State) addLoRA(l int, k loraKind, out, in []float32, n int) {
	if s.lora.adapter == nil {
		return
	}
	s.lora.outs[0] = out
	s.addLoRASet(l, k, s.lora.outs[:1], in, n)
}

// addLoRASet is addLoRA for the len(outs) <= 3 products of consecutive
// kinds first, first+1, ... that share the input in (Forward's fused
// query/key/value and gate/up products): their A products run in one
// dispatch.
func (s *State) addLoRASet(l int, first loraKind, outs [][]float32, in []float32, n int) {
	a := s.lora.adapter
	if a == nil {
		return
	}
	pairs := &a.layers[l]
	r := a.Info.Rank
	ls := &s.lora
	if len(ls.u) < 3*n*r {
		ls.u = make([]float32, 3*n*r)
	}
	if len(ls.t) < n*a.maxOut {
		ls.t = make([]float32, n*a.maxOut)
	}
	// outs may alias ls.outs (addLoRA): read it before reusing the array.
	var targets [3][]float32
	cnt := 0
	for i, o := range outs {
		p := &pairs[first+loraKind(i)]
		if p.a.Rows == 0 {
			continue
		}
		targets[cnt] = o
		ls.ws[cnt] = &p.a
		ls.idx[cnt] = i
		cnt++
	}
	if cnt == 0 {
		return
	}
	for j := range cnt {
		ls.outs[j] = ls.u[j*n*r : (j+1)*n*r]
	}
	s.pool.MatMulSet(ls.outs[:cnt], ls.ws[:cnt], in, n)
	for j := range cnt {
		p := &pairs[first+loraKind(ls.idx[j])]
		t := ls.t[:n*p.b.Rows]
		s.pool.MatMul(t, &p.b, ls.outs[j], n)
		kernels.Axpy(a.scale, t, targets[j][:n*p.b.Rows])
	}
}
