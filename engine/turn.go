package engine

import (
	"context"
	"sync"
	"time"
)

// turns give the actor one forward invocation between two holds of the
// same operation (the slices of a training step). The ownership lock hands
// the readers a turn only when they already wait at a writer's release; an
// actor that was sampling or delivering at that instant would otherwise
// find the next slice already holding the lock, and its stream would pause
// for two slices.
type turns struct {
	mu       sync.Mutex
	computes uint64        // actor cycles that ran a forward invocation
	ch       chan struct{} // made by the first waiter, closed (and dropped) by the next compute
	lastOp   uint64        // the operation of the latest exclusive hold
	lastAt   uint64        // computes at its release
}

// maxTurnWait bounds a writer's wait for the actor's turn: an actor whose
// requests are all blocked on slow clients computes nothing, and the
// writer must not wait for it.
const maxTurnWait = 250 * time.Millisecond

// computed records that the actor ran a forward invocation.
func (t *turns) computed() {
	t.mu.Lock()
	t.computes++
	if t.ch != nil { // waiters wait on it; a second compute before they wake finds it nil
		close(t.ch)
		t.ch = nil
	}
	t.mu.Unlock()
}

// released records the end of an exclusive hold of op.
func (t *turns) released(op uint64) {
	t.mu.Lock()
	t.lastOp, t.lastAt = op, t.computes
	t.mu.Unlock()
}

// await waits, before a hold of op, until the actor has run a forward
// invocation since op's previous hold ended, when op held last and busy
// reports that the actor has work; it gives up after maxTurnWait or when
// ctx ends.
func (t *turns) await(ctx context.Context, op uint64, busy func() bool) {
	deadline := time.NewTimer(maxTurnWait)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		if t.lastOp != op || t.computes != t.lastAt || !busy() {
			t.mu.Unlock()
			return
		}
		if t.ch == nil {
			t.ch = make(chan struct{})
		}
		ch := t.ch
		t.mu.Unlock()
		woken := false
		select {
		case <-ch:
			woken = true
		case <-ctx.Done():
		case <-deadline.C:
		}
		if !woken {
			return // ctx ended or the wait is over: hold anyway
		}
	}
}

// actorBusy reports whether the actor has a request it can advance: one
// prefilling or decoding that is not blocked on its client.
func (e *Engine) actorBusy() bool {
	s := e.Snapshot()
	return s.Active > s.Blocked
}
