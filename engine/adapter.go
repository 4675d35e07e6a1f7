package engine

import (
	"context"
	"fmt"

	"github.com/kiln-ai/kiln/engine/llama"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Adapter is a variant of the model's weights (a LoRA adapter) that a
// request runs with (docs/maintenance.md section 5). The engine compares
// adapters by identity (==); nil is the base model. It never runs a
// forward invocation that mixes rows of different adapters.
type Adapter interface {
	// AdapterName names it in errors and logs.
	AdapterName() string
}

// AdapterSwapper builds the barrier mutation that makes to (nil: the base
// model) the adapter the backend runs with; reason says who asked
// (SwapReasonRequest when a queued request needs it). Its Phase must be
// PhaseAdapter. The engine calls it from Engine.SwapAdapter and, for a
// queued request, on the actor goroutine when it queues the swap; the
// weights must already be in memory (read from disk before the barrier).
type AdapterSwapper func(to Adapter, reason string) Mutation

// SwapReasonRequest is the reason of a swap the engine queues because the
// request at the head of its queue needs another adapter.
const SwapReasonRequest = "request"

// ErrNoAdapters means a request named an adapter but the engine was built
// without WithAdapterSwapper; a client error.
var ErrNoAdapters = fmt.Errorf("%w: this engine runs no adapters", ErrInvalidRequest)

// WithAdapterSwapper lets requests name adapters (Request.Adapter): the
// engine swaps through the actor barrier with the mutations f builds.
func WithAdapterSwapper(f AdapterSwapper) Option {
	return func(e *Engine) { e.swapper = f }
}

// SwapAdapter makes to (nil: the base model) the loaded adapter through the
// actor barrier (Mutate): the active batch drains, then the swapper's
// mutation runs. Requests that name no other adapter then run with it.
func (e *Engine) SwapAdapter(ctx context.Context, to Adapter, reason string) error {
	if e.swapper == nil {
		return ErrNoAdapters
	}
	return e.mutate(ctx, e.adapterSwap(to, reason), reason, swapDetail(to))
}

// AdaptersEnabled reports whether requests may name adapters (the engine
// was built WithAdapters or WithAdapterSwapper).
func (e *Engine) AdaptersEnabled() bool { return e.swapper != nil }

// swapDetail fills a swap's record with the adapter it swaps in.
func swapDetail(to Adapter) func(*Operation) {
	return func(op *Operation) { op.Swap.To, op.Swap.Revision = adapterName(to), AdapterRevision(to) }
}

// BaseAdapter names the base model wherever an adapter name or revision
// is reported.
const BaseAdapter = timing.BaseAdapter

// adapterName is a's name, or BaseAdapter.
func adapterName(a Adapter) string {
	if a == nil {
		return BaseAdapter
	}
	return a.AdapterName()
}

// AdapterRevision is the revision (sha256) of a's weights (a
// WeightedAdapter's), or BaseAdapter: the x-kiln-loaded-adapter-revision a
// response carries and a swap's record names.
func AdapterRevision(a Adapter) string {
	if w, ok := a.(WeightedAdapter); ok && w.AdapterWeights() != nil {
		return w.AdapterWeights().Info.SHA256
	}
	return BaseAdapter
}

// WeightedAdapter is an Adapter whose LoRA weights are in memory: what the
// engine's own swap (WithAdapters) gives the backend.
type WeightedAdapter interface {
	Adapter
	AdapterWeights() *llama.Adapter
}

// adapterSetter is a backend that runs with an adapter (*llama.State).
type adapterSetter interface {
	SetAdapter(a *llama.Adapter)
}

// WithAdapters lets requests name adapters, swapped in by the engine's own
// barrier mutation: the backend (an adapterSetter, *llama.State) is given
// the adapter's weights (a WeightedAdapter; nil: the base model).
func WithAdapters() Option {
	return func(e *Engine) { e.swapper = weightSwapper }
}

// weightSwapper is the engine's own AdapterSwapper.
func weightSwapper(to Adapter, _ string) Mutation { return &weightSwap{to: to} }

// weightSwap sets the backend's adapter weights.
type weightSwap struct{ to Adapter }

// Phase implements Mutation.
func (w *weightSwap) Phase() timing.BackendPhase { return PhaseAdapter }

// Apply implements Mutation.
func (w *weightSwap) Apply(b Backend) error {
	st, ok := b.(adapterSetter)
	if !ok {
		return fmt.Errorf("engine: the backend %T takes no adapters", b)
	}
	var weights *llama.Adapter
	if w.to != nil {
		wa, ok := w.to.(WeightedAdapter)
		if !ok {
			return fmt.Errorf("engine: adapter %q has no weights (%T)", w.to.AdapterName(), w.to)
		}
		weights = wa.AdapterWeights()
	}
	st.SetAdapter(weights)
	return nil
}

// LoadedAdapter returns the adapter the backend runs with (nil: the base
// model).
func (e *Engine) LoadedAdapter() Adapter {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.loaded
}

// adapterSwap wraps the swapper's mutation so that the engine's record of
// the loaded adapter changes when it ran.
func (e *Engine) adapterSwap(to Adapter, reason string) *swapMutation {
	return &swapMutation{e: e, to: to, m: e.swapper(to, reason)}
}

// swapMutation is an adapter swap at the barrier.
type swapMutation struct {
	e  *Engine
	to Adapter
	m  Mutation
}

// Phase implements Mutation.
func (s *swapMutation) Phase() timing.BackendPhase { return PhaseAdapter }

// describe implements opMutation: the adapter it replaces.
func (s *swapMutation) describe(op *Operation) {
	s.e.mu.Lock()
	op.Swap.From = adapterName(s.e.loaded)
	s.e.mu.Unlock()
	op.Swap.To, op.Swap.Revision = adapterName(s.to), AdapterRevision(s.to)
}

// Apply implements Mutation: on success to is the loaded adapter.
func (s *swapMutation) Apply(b Backend) error {
	if err := s.m.Apply(b); err != nil {
		return err
	}
	s.e.mu.Lock()
	s.e.loaded = s.to
	s.e.mu.Unlock()
	if pb, ok := b.(PrefixBackend); ok && s.to != nil {
		// A new revision of the adapter's weights: the KV cached under
		// the old one can never be reused.
		pb.SupersedePrefixes(s.to.AdapterName(), AdapterRevision(s.to))
	}
	return nil
}

// swapForHead queues a swap when the request at the head of the queue
// needs another adapter than the loaded one and no mutation is queued or
// accepted (admission then waits for the FIFO anyway; once it is empty
// the head is checked again). FIFO order decides: requests behind the head
// wait too, whichever adapter they name, so none starves. A head whose
// adapter failed to swap in ends with that error.
func (a *actor) swapForHead() {
	e := a.e
	if e.swapper == nil || a.mut != nil {
		return
	}
	e.mu.Lock()
	if len(e.mutations) > 0 || len(e.queue) == 0 || e.queue[0].adapter == e.loaded {
		e.mu.Unlock()
		return
	}
	head := e.queue[0]
	if a.swapErr != nil && a.swapFailed != head.adapter {
		a.swapErr, a.swapFailed = nil, nil // a failure is only the next request's, once
	}
	if a.swapErr != nil {
		e.queue[0] = nil
		e.queue = e.queue[1:]
		e.mu.Unlock()
		err := a.swapErr
		a.swapErr, a.swapFailed = nil, nil
		a.end(head, FinishError, fmt.Errorf("engine: swap to adapter %q: %w", head.adapter.AdapterName(), err))
		return
	}
	e.mu.Unlock()
	// The swapper runs unlocked: it may read the engine (LoadedAdapter).
	q := &mutation{m: &headSwap{a: a, s: e.adapterSwap(head.adapter, SwapReasonRequest)}, done: make(chan error, 1),
		op: e.BeginOperation(timing.OpAdapterSwap, SwapReasonRequest, 0, swapDetail(head.adapter))}
	e.mu.Lock()
	e.mutations = append(e.mutations, q)
	e.mu.Unlock()
}

// headSwap is a swap the actor queued for the head of the queue: a failure
// is remembered so that the head ends instead of retrying forever.
type headSwap struct {
	a *actor
	s *swapMutation
}

// Phase implements Mutation.
func (h *headSwap) Phase() timing.BackendPhase { return PhaseAdapter }

// describe implements opMutation.
func (h *headSwap) describe(op *Operation) { h.s.describe(op) }

// Apply implements Mutation.
func (h *headSwap) Apply(b Backend) error {
	err := h.s.Apply(b)
	if err != nil {
		h.a.swapErr, h.a.swapFailed = err, h.s.to
	}
	return err
}
