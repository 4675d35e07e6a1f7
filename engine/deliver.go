package engine

import (
	"slices"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// deliver hands pending tokens to their channels without blocking: a full
// channel leaves the token pending (the request is skipped by decode steps
// until it drains). A request whose token is its last (a stop token, or its
// length reached) is finished at once, freeing its slot and budget even if
// that token still waits for room. It reports whether any token was
// delivered.
func (a *actor) deliver() bool {
	t0 := time.Time{}
	delivered := false
	for _, r := range a.active {
		if !r.hasPending {
			continue
		}
		now := a.now()
		if t0.IsZero() {
			t0 = now
		}
		if !a.handOver(r, now) {
			continue
		}
		delivered = true
		if r.state == stateFinishing {
			a.end(r, r.stream.res.Finish, nil)
			continue
		}
		if reason, ok := r.final(); ok {
			a.snap.Completed++
			a.finish(r, reason, nil)
		}
	}
	if !t0.IsZero() {
		a.c.delivery += timing.Elapsed(t0, a.now())
	}
	a.compact()
	return delivered
}

// handOver tries to put r's pending token, stamped delivered at now, into
// its channel. A full channel marks r blocked (from now, if not already)
// and, when the token is its last, finishes r so that its slot frees
// while the token waits. It reports whether the token went.
func (a *actor) handOver(r *request, now time.Time) bool {
	r.pending.Delivered = now
	select {
	case r.stream.ch <- r.pending:
	default:
		if r.blocked.IsZero() {
			r.blocked = now
			a.snap.BlockedEvents++
		}
		if reason, ok := r.final(); ok && r.state != stateFinishing {
			a.snap.Completed++
			a.finish(r, reason, nil)
		}
		return false
	}
	if !r.blocked.IsZero() {
		a.snap.BlockedTotal += timing.Elapsed(r.blocked, now)
	}
	r.hasPending = false
	r.blocked = time.Time{}
	return true
}

// finish ends r for reason: its slot and budget are freed at once (its
// KV blocks stay in the prefix cache, or on the backend's free list; a
// trim frees them). If its last token still waits for room in the channel
// (FinishStop and FinishLength only), r moves to finishing and stays in
// active to drain, skipped by compute; otherwise its stream closes.
func (a *actor) finish(r *request, reason FinishReason, err error) {
	if r.state.holdsSlot() {
		a.kvUsed -= r.reserve
		if r.looked {
			a.kvLooked -= r.reserve
		}
		// The bound first, its reservation returned: the release keeps
		// its blocks cached within it.
		a.fitPrefix(PrefixEvictCapacity)
		a.e.backend.Release(r.slot)
		a.free = append(a.free, r.slot)
		r.slot = -1
	}
	if reason == FinishCancelled || reason == FinishEvicted || reason == FinishError {
		r.hasPending = false
	}
	if r.hasPending {
		r.moveTo(stateFinishing)
		r.stream.res.Finish = reason
		return
	}
	a.end(r, reason, err)
}

// end closes r's stream with its result. r is removed from active by the
// next compact.
func (a *actor) end(r *request, reason FinishReason, err error) {
	if r.unwatch != nil {
		r.unwatch()
	}
	if reason == FinishError {
		a.snap.Errors++
	}
	r.hasPending = false
	r.slot = -1
	res := &r.stream.res
	res.Finish = reason
	res.Err = err
	res.Generated = r.generated
	close(r.stream.ch)
	r.moveTo(stateEnded)
}

// compact drops ended requests from active.
func (a *actor) compact() {
	a.active = slices.DeleteFunc(a.active, func(r *request) bool { return r.state == stateEnded })
}

// failAll ends every queued and active request with FinishError. release
// frees their slots in the backend (false after a backend panic, when its
// state is suspect).
func (a *actor) failAll(err error, release bool) {
	e := a.e
	e.mu.Lock()
	e.stopped = true
	queued := e.queue
	e.queue = nil
	e.mu.Unlock()
	for _, r := range queued {
		a.end(r, FinishError, err)
	}
	a.failMutations(err)
	a.failTrims(err)
	for _, r := range a.active {
		if r.state == stateEnded {
			continue
		}
		if release {
			r.hasPending = false
			a.finish(r, FinishError, err)
		} else {
			a.end(r, FinishError, err)
		}
	}
	a.compact()
}
