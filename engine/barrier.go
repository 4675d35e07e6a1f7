package engine

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Mutation is an exclusive change of what every sequence depends on (a KV
// resize, an adapter swap), run at the actor barrier (docs/maintenance.md
// section 4). The KV resize and the adapter swap implement it.
type Mutation interface {
	// Phase is PhaseResize or PhaseAdapter: the barrier phase its interval
	// is charged as to the requests it delayed.
	Phase() timing.BackendPhase
	// Apply makes the change. It runs on the actor goroutine with no
	// request holding a slot and device ownership held exclusively, so it
	// may call b freely. Work that needs neither (reading weights from
	// disk) belongs before Mutate, not here.
	Apply(b Backend) error
}

// mutation is one Mutate call waiting in the FIFO.
type mutation struct {
	m         Mutation
	op        *Operation // its record, begun when it was queued
	done      chan error // buffered: the actor never blocks on it
	cancelled atomic.Bool
}

// opKindOf is the operation kind of a barrier mutation of phase p.
func opKindOf(p timing.BackendPhase) timing.OpKind {
	if p == PhaseResize {
		return timing.OpResize
	}
	return timing.OpAdapterSwap
}

// Mutate queues m in the FIFO of exclusive mutations and waits for it to
// run. When the actor accepts it (the first in the FIFO), its barrier
// interval begins and admission of queued requests pauses; requests already
// active run to completion; then the queued mutations run in order, each
// interval ending when its Apply returns and the next one's beginning then;
// admission resumes when the FIFO is empty. Requests whose wait for
// admission overlapped a barrier interval are charged the overlap in their
// first token's Phases (resize or adapter slot); active requests are not.
//
// It returns Apply's error, ErrStopped if the engine stops first, or ctx's
// error if ctx ends first (a mutation not yet begun is then skipped).
//
// The mutation is an operation of reason "maintenance" (its kind by its
// phase); ResizeKV and SwapAdapter name their own.
func (e *Engine) Mutate(ctx context.Context, m Mutation) error {
	return e.mutate(ctx, m, ReasonMaintenance, nil)
}

// mutate is Mutate for an operation of reason, its detail filled by
// detail (nil: none) when it is queued.
func (e *Engine) mutate(ctx context.Context, m Mutation, reason string, detail func(*Operation)) error {
	if p := m.Phase(); p != PhaseResize && p != PhaseAdapter {
		return fmt.Errorf("%w: a barrier mutation's phase is resize or adapter, not %v", ErrInvalidRequest, p)
	}
	e.mu.Lock()
	if !e.started || e.stopped || !e.alive.Load() {
		e.mu.Unlock()
		return ErrStopped
	}
	q := &mutation{m: m, op: e.BeginOperation(opKindOf(m.Phase()), reason, 0, detail), done: make(chan error, 1)}
	e.mutations = append(e.mutations, q)
	e.mu.Unlock()
	e.poke()
	select {
	case err := <-q.done:
		return err
	case <-ctx.Done():
		q.cancelled.Store(true)
		return fmt.Errorf("engine: mutation: %w", ctx.Err())
	case <-e.done:
		select {
		case err := <-q.done:
			return err
		default:
			return ErrStopped
		}
	}
}

// BarrierTracker returns the tracker of the barrier's resize and adapter
// intervals.
func (e *Engine) BarrierTracker() *PhaseTracker { return e.barrier }

// nextMutation takes the first mutation of the FIFO that was not
// cancelled, or nil.
func (e *Engine) nextMutation() *mutation {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.mutations) > 0 {
		q := e.mutations[0]
		e.mutations[0] = nil
		e.mutations = e.mutations[1:]
		if !q.cancelled.Load() {
			return q
		}
		q.op.Outcome = timing.OutcomeCancelled
		e.endOperationAt(q.op, e.clock.Now(), nil)
		q.done <- context.Canceled
	}
	return nil
}

// barrier accepts the first queued mutation (its interval begins and
// admission pauses), and once no request holds a slot runs the FIFO in
// order. It reports whether a mutation ran; while it returns with a
// mutation accepted, admit admits nothing.
func (a *actor) barrier() bool {
	if a.mut == nil {
		if a.mut = a.e.nextMutation(); a.mut == nil {
			return false
		}
		a.mutGuard = a.e.barrier.BeginOp(a.mut.op)
	}
	if a.slots() > 0 {
		return false // the batch drains first
	}
	for a.mut != nil {
		op := a.mut.op
		err := a.apply(a.mut.m, op)
		end := a.mutGuard.End()
		// The requests queued behind it name it among their first
		// token's blockers: its whole barrier interval, from acceptance.
		a.segs.addOp(Hold{Op: op.ID, Kind: op.Kind, Start: a.mutGuard.Started(), End: end})
		a.snap.Mutations++
		a.publish() // the caller sees the new state (a resize's budget) once Mutate returns
		a.e.endOperationAt(op, end, err)
		a.mut.done <- err
		if a.mut = a.e.nextMutation(); a.mut != nil {
			a.mutGuard = a.e.barrier.BeginOp(a.mut.op)
		}
	}
	return true
}

// apply runs m, the mutation of op, holding ownership exclusively (behind
// any other writer).
func (a *actor) apply(m Mutation, op *Operation) error {
	if err := a.e.own.lock(context.Background(), a.e.stop, nil); err != nil {
		return ErrStopped
	}
	defer a.e.own.Unlock()
	op.Start = a.now()
	defer func() { op.Hold = timing.Elapsed(op.Start, a.now()) }()
	if am, ok := m.(actorMutation); ok {
		return am.applyActor(a, op)
	}
	if om, ok := m.(opMutation); ok {
		om.describe(op)
	}
	return m.Apply(a.e.backend)
}

// opMutation is a mutation that fills its operation's record when it is
// applied (an adapter swap names the adapter it replaces).
type opMutation interface {
	describe(op *Operation)
}

// actorMutation is a mutation of the engine's own (the KV resize) that
// changes the actor's state as well as the backend's and fills op.
type actorMutation interface {
	applyActor(a *actor, op *Operation) error
}

// failMutations ends the accepted and queued mutations with err.
func (a *actor) failMutations(err error) {
	e := a.e
	if a.mut != nil {
		e.endOperationAt(a.mut.op, a.mutGuard.End(), err)
		a.mut.done <- err
		a.mut = nil
	}
	e.mu.Lock()
	queued := e.mutations
	e.mutations = nil
	e.mu.Unlock()
	for _, q := range queued {
		e.EndOperation(q.op, err)
		q.done <- err
	}
}
