package engine

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Reclaimer is a Backend that can give back memory it holds but does not
// need now (scratch sized for past batches, caches of released sequences).
// *llama.State implements it. Reclaim runs on the actor goroutine, like
// every Backend method, and returns the bytes it released.
type Reclaimer interface {
	Reclaim() int64
}

// TrimResult is what one trim did.
type TrimResult struct {
	Op           uint64        // the trim's operation identity
	Start        time.Time     // the trim began, holding ownership exclusively
	Duration     time.Duration // its work, under exclusive ownership
	Deferred     time.Duration // from the Trim call until the actor was idle and ownership held
	BackendBytes int64         // released by the backend (Reclaimer)
	PrefixBlocks int           // idle prefix cache entries (blocks) the backend dropped
	HeapReleased int64         // Go heap returned to the operating system
	RSSBefore    int64         // resident set size before and after (0 where unknown)
	RSSAfter     int64
}

// Reclaimed is the memory the trim gave back: the backend's buffers (freed
// to the Go heap) and the heap pages returned to the operating system.
func (r TrimResult) Reclaimed() int64 { return r.BackendBytes + r.HeapReleased }

// trimReq is one Trim call waiting for the actor.
type trimReq struct {
	asked time.Time
	done  chan trimReply // buffered
}

// Trim reasons: an operator's (POST /v1/maintenance/trim) and the idle
// policy's.
const (
	ReasonMaintenance = "maintenance"
	ReasonAutomatic   = "automatic_memory_policy"
)

type trimReply struct {
	res TrimResult
	err error
}

// Trim returns freed memory to the operating system (docs/maintenance.md section
// 7): the backend's unused buffers (when it is a Reclaimer) and the Go heap
// (debug.FreeOSMemory). It runs on the actor goroutine between two forward
// invocations (the actor is idle then: no forward pass in flight, none
// starts until it is done), holding device ownership exclusively (behind any
// other writer) with the trim phase open, so a waiting request's next gap
// is charged the trim as gpu_lock_wait and trim and names the trim's
// operation among its blockers. The call defers until the actor reaches
// that point, at most one forward invocation; concurrent calls share one
// trim, one operation (of the first call's reason). It fails with
// ErrRestartRequired when the actor is not healthy, or with ctx's error
// (the trim may still run).
func (e *Engine) Trim(ctx context.Context, reason string) (TrimResult, error) {
	q := &trimReq{asked: e.clock.Now(), done: make(chan trimReply, 1)}
	e.mu.Lock()
	if !e.started || e.stopped || !e.alive.Load() {
		e.mu.Unlock()
		return TrimResult{}, ErrRestartRequired
	}
	if len(e.trims) == 0 {
		e.trimOp = e.BeginOperation(timing.OpTrim, reason, 0, nil)
	}
	e.trims = append(e.trims, q)
	e.mu.Unlock()
	e.poke()
	select {
	case r := <-q.done:
		return r.res, r.err
	case <-ctx.Done():
		return TrimResult{}, fmt.Errorf("engine: trim: %w", ctx.Err())
	case <-e.done:
		select {
		case r := <-q.done:
			return r.res, r.err
		default:
			return TrimResult{}, ErrRestartRequired
		}
	}
}

// trim runs the pending trims, if any, as one and reports whether it ran.
func (a *actor) trim() bool {
	e := a.e
	e.mu.Lock()
	reqs, op := e.trims, e.trimOp
	e.trims, e.trimOp = nil, nil
	e.mu.Unlock()
	if len(reqs) == 0 {
		return false
	}
	res, err := a.reclaim(op)
	a.publish() // the caller sees the trim counted once Trim returns
	for _, q := range reqs {
		r := res
		r.Deferred = timing.Elapsed(q.asked, r.Start)
		q.done <- trimReply{res: r, err: err}
	}
	return true
}

// reclaim does one trim under exclusive ownership and charges it like an
// ownership wait of the actor: gpu_lock_wait (inside decode) with the trim
// phase beside it, and a lock-wait blocker segment. Inference could not
// run for the trim's exclusive hold (exactly the trim guard's interval)
// plus any wait behind another writer first, so without such a writer the
// wait and the trim are equal and the narrower trim wins the tie.
func (a *actor) reclaim(op *Operation) (TrimResult, error) {
	e := a.e
	snap := e.tracker.Snapshot()
	var waited time.Duration
	var w0 time.Time
	if !e.own.tryLock() {
		w0 = a.now()
		if err := e.own.lock(context.Background(), e.stop, nil); err != nil {
			e.EndOperation(op, ErrStopped)
			return TrimResult{}, ErrStopped
		}
		waited = timing.Elapsed(w0, a.now())
	}
	g := e.tracker.BeginOp(op)
	res := TrimResult{Op: op.ID, Start: g.Started(), RSSBefore: ResidentBytes()}
	if w0.IsZero() {
		w0 = res.Start
	}
	if r, ok := e.backend.(Reclaimer); ok {
		pb, cached := e.backend.(PrefixBackend)
		var ev0 uint64
		if cached {
			ev0 = pb.PrefixStats().Evictions[timing.PrefixEvictTrim]
		}
		res.BackendBytes = r.Reclaim()
		if cached {
			res.PrefixBlocks = int(pb.PrefixStats().Evictions[timing.PrefixEvictTrim] - ev0)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	res.HeapReleased = max(int64(after.HeapReleased)-int64(before.HeapReleased), 0)
	res.RSSAfter = ResidentBytes()
	end := g.End()
	e.own.Unlock()

	res.Duration = timing.Elapsed(res.Start, end)
	a.chargeWait(waited + res.Duration)
	obs := e.tracker.ObservedSince(&snap)
	for i, d := range obs {
		a.c.maint[i] += d
	}
	a.waitedBehind(w0, end)
	a.countTrim(&res)
	op.Start, op.Hold = res.Start, res.Duration
	op.Trim = timing.TrimDetail{BackendBytes: res.BackendBytes, PrefixBlocks: res.PrefixBlocks, HeapReleased: res.HeapReleased,
		RSSBefore: res.RSSBefore, RSSAfter: res.RSSAfter}
	op.Outcome = OutcomeZeroYield
	if res.Reclaimed() > 0 {
		op.Outcome = OutcomeReclaimed
	}
	e.endOperationAt(op, end, nil)
	return res, nil
}

// A trim's outcomes: it gave memory back, or found none to give.
const (
	OutcomeReclaimed = "reclaimed"
	OutcomeZeroYield = "zero_yield"
)

// countTrim records a trim in the snapshot's reclaim counters.
func (a *actor) countTrim(res *TrimResult) {
	s := &a.snap
	if res.Reclaimed() > 0 {
		s.ReclaimReclaimed++
	} else {
		s.ReclaimZeroYield++
	}
	s.ReclaimedBytes += uint64(res.Reclaimed())
	s.ReclaimLast = res.Duration
}

// failTrims ends the pending trims with err.
func (a *actor) failTrims(err error) {
	e := a.e
	e.mu.Lock()
	reqs, op := e.trims, e.trimOp
	e.trims, e.trimOp = nil, nil
	e.mu.Unlock()
	e.EndOperation(op, err)
	for _, q := range reqs {
		q.done <- trimReply{err: err}
	}
}
