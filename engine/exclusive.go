package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// ErrRestartRequired means the engine is not healthy (its actor stopped,
// failed, or made no progress for the wedge timeout while a writer waited
// for ownership): maintenance cannot run and the server must be restarted.
var ErrRestartRequired = errors.New("engine: the engine is not healthy (actor stopped, failed or wedged); a restart is required")

// DefaultWedgeTimeout is how long a writer waits for ownership while the
// actor completes no cycle before it declares the engine wedged.
const DefaultWedgeTimeout = 2 * time.Minute

// WithWedgeTimeout sets how long a waiting writer tolerates an actor that
// completes no cycle (default DefaultWedgeTimeout).
func WithWedgeTimeout(d time.Duration) Option {
	return func(e *Engine) {
		if d > 0 {
			e.wedgeAfter = d
		}
	}
}

// Exclusive runs fn holding device ownership exclusively, with writer
// priority, as one hold of op: once it waits, no new forward invocation
// starts until fn has run, so it waits at most one invocation. op's phase
// (trim, resize, adapter or training, by its kind) is open on the engine's
// phase tracker exactly while fn runs, after ownership is held, and the
// interval is one of op's holds: the forward invocations that waited
// behind it are charged their whole wait as gpu_lock_wait and the part of
// it inside fn as the phase, and name op among their blockers. op.Start is
// set at its first hold and op.Hold grows by each, so an operation cut in
// slices (a training step) calls Exclusive once a slice. fn must be one
// bounded unit of work and must not call the Backend, which belongs to the
// actor.
//
// While it waits it checks engine health: an actor that stopped, failed or
// completed no cycle for the wedge timeout makes it return
// ErrRestartRequired instead of hanging. It returns ctx's error if ctx ends
// first; either way it then holds nothing and fn did not run.
func (e *Engine) Exclusive(ctx context.Context, op *Operation, fn func() error) error {
	if op == nil || op.Kind == timing.OpTrainingJob {
		return fmt.Errorf("%w: Exclusive needs an operation that holds the device", ErrInvalidRequest)
	}
	e.turns.await(ctx, op.ID, e.actorBusy)
	if err := e.acquireExclusive(ctx); err != nil {
		return err
	}
	defer e.own.Unlock()
	defer e.turns.released(op.ID)
	g := e.tracker.BeginOp(op)
	if op.Start.IsZero() {
		op.Start = g.Started()
	}
	err := fn()
	end := g.End()
	op.Hold += timing.Elapsed(g.Started(), end)
	return err
}

// acquireExclusive takes ownership exclusively with the health checks of
// Exclusive.
func (e *Engine) acquireExclusive(ctx context.Context) error {
	if !e.healthy() {
		return ErrRestartRequired
	}
	t := time.NewTicker(e.wedgeAfter / 4)
	defer t.Stop()
	last, since := e.Snapshot().Cycles, e.clock.Now()
	w := &watch{tick: t.C, check: func() error {
		if !e.healthy() {
			return ErrRestartRequired
		}
		now, c := e.clock.Now(), e.Snapshot().Cycles
		if c != last {
			last, since = c, now
			return nil
		}
		if timing.Elapsed(since, now) >= e.wedgeAfter {
			return fmt.Errorf("%w: no actor cycle for %v", ErrRestartRequired, timing.Elapsed(since, now))
		}
		return nil
	}}
	err := e.own.lock(ctx, e.done, w)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errAbandoned):
		return ErrRestartRequired
	case ctx.Err() != nil:
		return fmt.Errorf("engine: waiting for exclusive ownership: %w", err)
	}
	return err
}

// healthy reports whether the actor runs: started and alive. A stopped
// (shut down) engine is not healthy either.
func (e *Engine) healthy() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started && !e.stopped && e.alive.Load()
}

// PhaseTracker returns the engine's tracker of maintenance phases run
// under ownership (trim, training).
func (e *Engine) PhaseTracker() *PhaseTracker { return e.tracker }
