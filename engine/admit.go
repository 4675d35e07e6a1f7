package engine

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// reap ends cancelled requests (freeing slot and KV at once) and evicts
// those blocked on delivery for longer than the grace.
func (a *actor) reap() {
	e := a.e
	e.mu.Lock()
	kept := e.queue[:0]
	var gone []*request
	for _, r := range e.queue {
		if r.cancelled.Load() {
			gone = append(gone, r)
			continue
		}
		kept = append(kept, r)
	}
	clear(e.queue[len(kept):])
	e.queue = kept
	e.mu.Unlock()
	for _, r := range gone {
		a.snap.Cancellations++
		a.end(r, FinishCancelled, nil)
	}

	var now time.Time
	for _, r := range a.active {
		switch {
		case r.cancelled.Load():
			a.snap.Cancellations++
			a.finish(r, FinishCancelled, nil)
		case r.hasPending && !r.blocked.IsZero():
			if now.IsZero() {
				now = a.now()
			}
			if timing.Elapsed(r.blocked, now) > e.cfg.EvictGrace {
				a.snap.Evictions++
				a.finish(r, FinishEvicted, nil)
			}
		}
	}
	a.compact()
}

// admit moves queued requests into slots, FIFO, while a slot, the batch
// limit and the KV budget allow: queued -> admitting under the queue's
// lock, admitting -> prefilling once the admission segment is stamped.
func (a *actor) admit() {
	e := a.e
	e.mu.Lock()
	if len(e.queue) == 0 {
		e.mu.Unlock()
		return
	}
	t0 := a.now()
	mark := a.c
	n := 0
	for _, r := range e.queue {
		if len(a.free) == 0 || a.slots() >= a.maxBatch || a.kvUsed+r.reserve > a.kvBudget || r.adapter != e.loaded {
			break // FIFO: another adapter waits for its swap (swapForHead)
		}
		r.moveTo(stateAdmitting)
		r.slot = a.free[len(a.free)-1]
		a.free = a.free[:len(a.free)-1]
		a.kvUsed += r.reserve
		r.mark = mark
		r.queueWait = timing.Elapsed(r.submitted, t0)
		r.barrierObs = e.barrier.ObservedSince(&r.barrierMark)
		r.stream.res.Admitted = t0
		a.active = append(a.active, r)
		n++
	}
	clear(e.queue[:n])
	e.queue = e.queue[n:]
	e.mu.Unlock()
	if n == 0 {
		return
	}
	t1 := a.now()
	for _, r := range a.active[len(a.active)-n:] {
		r.stream.res.AdmissionDone = t1
		r.moveTo(statePrefilling)
	}
	d := timing.Elapsed(t0, t1)
	a.c.admission += d
	a.snap.Admitted += uint64(n)
	a.snap.Admissions++
	a.snap.AdmissionLast = d
	a.snap.AdmissionMax = max(a.snap.AdmissionMax, d)
	a.snap.AdmissionTotal += d
}

// slots counts the requests holding a slot.
func (a *actor) slots() int {
	n := 0
	for _, r := range a.active {
		if r.state.holdsSlot() {
			n++
		}
	}
	return n
}
