package engine

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/timing"
)

// pollInterval is how often an actor with nothing to compute retries the
// delivery of tokens blocked on full channels (a consumer that reads does
// not signal the actor).
const pollInterval = time.Millisecond

// request is the actor's state of one submitted request. Fields below the
// line are touched only by the actor once the request left the queue.
type request struct {
	prompt    []int
	stopIDs   []int
	maxGen    int // MaxTokens capped by the context
	reserve   int // KV positions reserved: len(prompt) + maxGen
	submitted time.Time
	id        uint64 // Request.ID, reported in other tokens' blockers
	sampler   *Sampler
	stream    *Stream
	cancelled atomic.Bool
	unwatch   func() bool // stops the context watch

	slot       int // -1 when none
	fed        int // positions written into the KV cache
	last       int // the latest sampled token, fed by the next decode step
	generated  int
	hasLogits  bool // the slot's logits row is fresh and waits for sampling
	mark       counters
	queueWait  time.Duration // actor queue, charged to the first token
	lastReady  time.Time     // the previous token's Ready (zero before the first)
	pending    Token         // a token the channel had no room for
	hasPending bool
	blocked    time.Time // when pending was set
	done       bool      // finished; only the pending token remains
	ended      bool      // stream closed; dropped from active by compact
}

func (r *request) prefilling() bool { return r.fed < len(r.prompt) }

// actor is the state owned by the actor goroutine.
type actor struct {
	e       *Engine
	active  []*request // admitted, in admission order; also finished ones draining
	free    []int      // free slots
	kvUsed  int
	c       counters
	rows    []llama.Row
	logits  [][]float32 // argument of Forward, one entry per row wanting logits
	slotBuf [][]float32 // a logits row per slot
	sampled []*request  // requests that took a token this cycle
	snap    Snapshot    // published at the end of every cycle

	segs      segments   // recent prefill passes and ownership waits, for Token.Blockers
	prefilled []*request // requests with rows in this cycle's prefill pass

	idleTimer *time.Timer // reused by idle
}

func (a *actor) init(e *Engine) {
	a.e = e
	n := e.backend.Slots()
	a.free = make([]int, 0, n)
	for s := n - 1; s >= 0; s-- {
		a.free = append(a.free, s)
	}
	a.slotBuf = make([][]float32, n)
	for s := range a.slotBuf {
		a.slotBuf[s] = make([]float32, e.vocab)
	}
	a.snap.KVBudget = e.cfg.KVBudget
}

func (a *actor) now() time.Time { return a.e.clock.Now() }

// run is the actor goroutine.
func (a *actor) run() {
	e := a.e
	defer close(e.done)
	defer func() {
		if p := recover(); p != nil {
			e.alive.Store(false)
			a.failAll(fmt.Errorf("engine: actor failed: %v", p), false)
			a.publish()
		}
	}()
	var timer *time.Timer
	for {
		select {
		case <-e.stop:
			a.failAll(ErrStopped, true)
			a.publish()
			return
		default:
		}
		advanced := a.cycle()
		a.publish()
		if advanced {
			if e.cfg.CycleIdle > 0 {
				a.idle(e.cfg.CycleIdle)
			}
			continue
		}
		// Nothing to compute: wait for a submission or cancellation, or
		// poll blocked deliveries.
		var tick <-chan time.Time
		if a.snap.Blocked > 0 || a.snap.Draining > 0 {
			if timer == nil {
				timer = time.NewTimer(pollInterval)
			} else {
				timer.Reset(pollInterval)
			}
			tick = timer.C
		}
		select {
		case <-e.wake:
		case <-tick:
		case <-e.stop:
		}
	}
}

// idle is the cooperative pause after a cycle that advanced work.
func (a *actor) idle(d time.Duration) {
	t0 := a.now()
	if a.idleTimer == nil {
		a.idleTimer = time.NewTimer(d)
	} else {
		a.idleTimer.Reset(d)
	}
	select {
	case <-a.idleTimer.C:
	case <-a.e.stop:
		a.idleTimer.Stop()
	}
	a.c.idle += timing.Elapsed(t0, a.now())
}

// cycle runs one actor cycle and reports whether it advanced work (computed
// or delivered).
func (a *actor) cycle() bool {
	a.snap.Cycles++
	a.reap()
	a.admit()
	advanced := a.compute()
	if a.deliver() {
		advanced = true
	}
	return advanced
}

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
// limit and the KV budget allow.
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
		if len(a.free) == 0 || a.slots() >= e.cfg.MaxBatch || a.kvUsed+r.reserve > e.cfg.KVBudget {
			break
		}
		r.slot = a.free[len(a.free)-1]
		a.free = a.free[:len(a.free)-1]
		a.kvUsed += r.reserve
		r.mark = mark
		r.queueWait = timing.Elapsed(r.submitted, t0)
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
		if r.slot >= 0 {
			n++
		}
	}
	return n
}

// compute runs, under shared device ownership, one prefill chunk and one
// batched decode step, and samples every request with fresh logits. It
// reports whether anything ran.
func (a *actor) compute() bool {
	e := a.e
	work := false
	for _, r := range a.active {
		if r.slot >= 0 && (r.prefilling() || !r.hasPending) {
			work = true
			break
		}
	}
	if !work {
		return false
	}

	// Ownership wait counts as decode time (the actor's compute phase) and
	// as the gpu_lock_wait slot; a real wait (behind a writer) is also a
	// blocker segment.
	l0 := a.now()
	waited, err := e.own.rlock(e.stop)
	if err != nil {
		d := timing.Elapsed(l0, a.now())
		a.c.lockWait += d
		a.c.decode += d
		a.snap.LockWaitTotal += d
		return false
	}
	defer e.own.RUnlock()
	t := a.now()
	d := timing.Elapsed(l0, t)
	a.c.lockWait += d
	a.c.decode += d
	a.snap.LockWaitTotal += d
	if waited && d > 0 {
		a.segs.add(BlockerLockWait, 0, l0, t)
	}

	// Prefill: up to PrefillChunk prompt tokens, oldest request first.
	a.rows, a.logits = a.rows[:0], a.logits[:0]
	budget := e.cfg.PrefillChunk
	var completing []*request
	a.prefilled = a.prefilled[:0]
	for _, r := range a.active {
		if budget == 0 {
			break
		}
		if r.slot < 0 || !r.prefilling() {
			continue
		}
		n := min(len(r.prompt)-r.fed, budget)
		for i := range n {
			pos := r.fed + i
			last := pos == len(r.prompt)-1
			a.rows = append(a.rows, llama.Row{Slot: r.slot, Pos: pos, Token: r.prompt[pos], Logits: last})
			if last {
				a.logits = append(a.logits, a.slotBuf[r.slot])
			}
		}
		r.fed += n
		budget -= n
		a.prefilled = append(a.prefilled, r)
		if !r.prefilling() {
			completing = append(completing, r)
		}
	}
	if len(a.rows) > 0 {
		a.snap.PrefillLast = len(a.rows)
		end := a.forward(t)
		a.c.prefill += timing.Elapsed(t, end)
		for _, r := range a.prefilled {
			a.segs.add(BlockerPrefill, r.id, t, end)
		}
		clear(a.prefilled) // drop references to requests that may end
		for _, r := range completing {
			r.hasLogits = true
			r.stream.res.PrefillDone = end
		}
		t = end
	}

	// Decode: one row per request that has a token to feed and room to
	// deliver its next one.
	a.rows, a.logits = a.rows[:0], a.logits[:0]
	for _, r := range a.active {
		if r.slot < 0 || r.prefilling() || r.hasLogits || r.hasPending || r.done {
			continue
		}
		a.rows = append(a.rows, llama.Row{Slot: r.slot, Pos: r.fed, Token: r.last, Logits: true})
		a.logits = append(a.logits, a.slotBuf[r.slot])
		r.fed++
		r.hasLogits = true
	}
	if len(a.rows) > 0 {
		a.snap.BatchLast = len(a.rows)
		a.snap.BatchMax = max(a.snap.BatchMax, len(a.rows))
		a.forward(t)
	}

	// Sample every request with fresh logits.
	s0 := a.now()
	a.sampled = a.sampled[:0]
	for _, r := range a.active {
		if !r.hasLogits {
			continue
		}
		r.hasLogits = false
		r.last = r.sampler.Sample(a.slotBuf[r.slot])
		r.generated++
		a.sampled = append(a.sampled, r)
	}
	ready := a.now()
	a.c.sampling += timing.Elapsed(s0, ready)
	a.c.decode += timing.Elapsed(t, ready)
	a.snap.TokensGenerated += uint64(len(a.sampled))

	// The tokens are ready: their phases are the counters' progress since
	// each request's previous token.
	for _, r := range a.sampled {
		p := a.c.phasesSince(&r.mark)
		if r.generated == 1 {
			p.ActorQueue = r.queueWait
		}
		r.mark = a.c
		from := r.lastReady
		if r.generated == 1 {
			from = r.submitted
		}
		r.pending = Token{Index: r.generated - 1, ID: r.last, Ready: ready, Phases: p}
		a.segs.fill(&r.pending, from, ready)
		r.lastReady = ready
		r.hasPending = true
		r.blocked = time.Time{}
	}
	return true
}

// forward runs the backend over a.rows, starting at t0, and returns the
// instant it ended.
func (a *actor) forward(t0 time.Time) time.Time {
	a.e.backend.Forward(a.rows, a.logits)
	end := a.now()
	d := timing.Elapsed(t0, end)
	a.snap.Forwards++
	a.snap.ForwardLast = d
	a.snap.ForwardMax = max(a.snap.ForwardMax, d)
	a.snap.ForwardTotal += d
	return end
}

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
		r.pending.Delivered = now
		select {
		case r.stream.ch <- r.pending:
		default:
			if r.blocked.IsZero() {
				r.blocked = now
				a.snap.BlockedEvents++
			}
			if reason, ok := r.final(); ok && !r.done {
				a.snap.Completed++
				a.finish(r, reason, nil)
			}
			continue
		}
		delivered = true
		if !r.blocked.IsZero() {
			a.snap.BlockedTotal += timing.Elapsed(r.blocked, now)
		}
		r.hasPending = false
		r.blocked = time.Time{}
		if r.done {
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

// final reports whether the pending (latest) token ends the request, and
// why.
func (r *request) final() (FinishReason, bool) {
	switch {
	case slices.Contains(r.stopIDs, r.last):
		return FinishStop, true
	case r.generated >= r.maxGen:
		return FinishLength, true
	}
	return "", false
}

// finish ends r for reason: its slot, KV memory and budget are freed at
// once. If its last token still waits for room in the channel (FinishStop
// and FinishLength only), r stays in active to drain, skipped by compute;
// otherwise its stream closes.
func (a *actor) finish(r *request, reason FinishReason, err error) {
	if r.slot >= 0 {
		a.e.backend.Release(r.slot)
		a.free = append(a.free, r.slot)
		a.kvUsed -= r.reserve
		r.slot = -1
	}
	if reason == FinishCancelled || reason == FinishEvicted || reason == FinishError {
		r.hasPending = false
	}
	if r.hasPending {
		r.done = true
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
	r.done = true
	r.hasPending = false
	r.slot = -1
	res := &r.stream.res
	res.Finish = reason
	res.Err = err
	res.Generated = r.generated
	close(r.stream.ch)
	r.ended = true
}

// compact drops ended requests from active.
func (a *actor) compact() {
	a.active = slices.DeleteFunc(a.active, func(r *request) bool { return r.ended })
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
	for _, r := range a.active {
		if r.ended {
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

// publish copies the actor's counters into the engine's snapshot.
func (a *actor) publish() {
	s := &a.snap
	s.Active, s.Prefilling, s.Draining, s.Blocked = 0, 0, 0, 0
	for _, r := range a.active {
		switch {
		case r.slot < 0:
			s.Draining++
		case r.prefilling():
			s.Prefilling++
			s.Active++
		default:
			s.Active++
		}
		if r.hasPending && !r.blocked.IsZero() {
			s.Blocked++
		}
	}
	s.KVReserved = a.kvUsed
	s.CycleIdleTotal = a.c.idle
	e := a.e
	e.snapMu.Lock()
	e.snap = *s
	e.snapMu.Unlock()
}
