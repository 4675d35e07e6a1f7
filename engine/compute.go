package engine

import (
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/timing"
)

// compute runs the cycle's device work under shared ownership: one prefill
// chunk, one batched decode step, sampling of every fresh logits row, and
// the timing records of the tokens that became ready. It reports whether
// anything ran.
func (a *actor) compute() bool {
	if !a.hasWork() {
		return false
	}
	t, ok := a.acquire()
	if !ok {
		return false
	}
	defer a.e.own.RUnlock()
	a.fresh = a.fresh[:0]
	t = a.prefillStep(t)
	a.decodeStep(t)
	ready := a.sample(t)
	a.tokensReady(ready)
	return true
}

// hasWork reports whether a request is prefilling or can take a decode
// step.
func (a *actor) hasWork() bool {
	for _, r := range a.active {
		if r.state == statePrefilling || r.decodable() {
			return true
		}
	}
	return false
}

// acquire takes the ownership lock shared and returns the instant it did.
// The wait counts as decode time (the actor's compute phase) and as the
// gpu_lock_wait slot, measured on the fast path too (0); a real wait
// (behind a writer) is also a blocker segment, and the maintenance phases
// that ran during it (from a tracker snapshot taken before waiting) are
// charged beside it. It reports false when the engine stopped while
// waiting.
func (a *actor) acquire() (time.Time, bool) {
	e := a.e
	l0 := a.now()
	if e.own.tryRLock() {
		// Nobody held or awaited ownership: the wait was measured as 0
		// (the lock's own bookkeeping is not a wait), so a writer's phase
		// in the same gap ties with the gap's gpu_lock_wait exactly.
		a.chargeWait(0)
		return l0, true
	}
	snap := e.tracker.Snapshot()
	_, err := e.own.rlock(e.stop)
	t := a.now()
	a.chargeWait(timing.Elapsed(l0, t))
	obs := e.tracker.ObservedSince(&snap)
	for i, d := range obs {
		a.c.maint[i] += d
	}
	if err != nil {
		return t, false
	}
	a.waitedBehind(l0, t)
	return t, true
}

// waitedBehind records an ownership wait from w0 to end as blocker
// segments: the operations that held ownership during it, by identity
// (the part of each hold inside the wait), then the wait itself.
func (a *actor) waitedBehind(w0, end time.Time) {
	if !end.After(w0) {
		return
	}
	a.e.tracker.Holds(w0, end, a.segs.addOp)
	a.segs.add(BlockerLockWait, 0, w0, end)
}

// chargeWait counts an ownership wait of d.
func (a *actor) chargeWait(d time.Duration) {
	a.c.lockWait += d
	a.c.decode += d
	a.snap.LockWaitTotal += d
}

// prefillStep feeds up to Config.PrefillChunk prompt positions, oldest
// request first, in one forward pass starting at t, and returns the
// instant it ended (t when nothing was prefilled). A request whose last
// prompt position was fed has fresh logits: it is sampled this cycle.
func (a *actor) prefillStep(t time.Time) time.Time {
	a.rows, a.logits = a.rows[:0], a.logits[:0]
	a.prefilled = a.prefilled[:0]
	budget := a.e.cfg.PrefillChunk
	for _, r := range a.active {
		if budget == 0 {
			break
		}
		if r.state != statePrefilling || !a.lookUp(r) {
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
	}
	if len(a.rows) == 0 {
		return t
	}
	a.snap.PrefillLast = len(a.rows)
	end := a.forward(t)
	a.c.prefill += timing.Elapsed(t, end)
	for _, r := range a.prefilled {
		a.segs.add(BlockerPrefill, r.id, t, end)
		if r.fed == len(r.prompt) {
			r.stream.res.PrefillDone = end
			a.fresh = append(a.fresh, r)
		}
	}
	clear(a.prefilled) // drop references to requests that may end
	return end
}

// decodeStep runs one batched decode step, starting at t, with a row for
// every decoding request whose previous token left for its channel.
func (a *actor) decodeStep(t time.Time) {
	a.rows, a.logits = a.rows[:0], a.logits[:0]
	for _, r := range a.active {
		if !r.decodable() {
			continue
		}
		a.rows = append(a.rows, llama.Row{Slot: r.slot, Pos: r.fed, Token: r.last, Logits: true})
		a.logits = append(a.logits, a.slotBuf[r.slot])
		r.fed++
		a.fresh = append(a.fresh, r)
	}
	if len(a.rows) > 0 {
		a.snap.BatchLast = len(a.rows)
		a.snap.BatchMax = max(a.snap.BatchMax, len(a.rows))
		a.forward(t)
	}
}

// sample draws the next token of every request with fresh logits (a
// request sampling its first token starts decoding) and returns the
// instant the tokens are ready. Decode time runs from t, the end of the
// prefill pass, to then.
func (a *actor) sample(t time.Time) time.Time {
	s0 := a.now()
	kept := a.fresh[:0]
	for _, r := range a.fresh {
		id, err := a.sampleOne(r)
		if err != nil {
			a.finish(r, FinishError, err) // this request alone (fault.go)
			continue
		}
		r.last = id
		r.generated++
		if r.state == statePrefilling {
			r.moveTo(stateDecoding)
		}
		kept = append(kept, r)
	}
	clear(a.fresh[len(kept):])
	a.fresh = kept
	ready := a.now()
	a.c.sampling += timing.Elapsed(s0, ready)
	a.c.decode += timing.Elapsed(t, ready)
	a.snap.TokensGenerated += uint64(len(a.fresh))
	return ready
}

// tokensReady makes each sampled token its request's pending token: its
// phases are the counters' progress since the request's previous token
// (plus the queue wait for a first token), its blockers the largest
// recorded segments inside its interval.
func (a *actor) tokensReady(ready time.Time) {
	for _, r := range a.fresh {
		p := a.c.phasesSince(&r.mark)
		from := r.lastReady
		if r.generated == 1 {
			p.ActorQueue = r.queueWait
			r.barrierObs.AddTo(&p)
			from = r.submitted
		}
		r.mark = a.c
		r.pending = Token{Index: r.generated - 1, ID: r.last, Ready: ready, Phases: p, Logprob: r.lastLP, TopLogprobs: r.lastTop}
		a.segs.fill(&r.pending, from, ready)
		r.lastReady = ready
		r.hasPending = true
		r.blocked = time.Time{}
	}
	clear(a.fresh) // drop references to requests that may end
	a.fresh = a.fresh[:0]
}

// forward runs the backend over a.rows, starting at t0, and returns the
// instant it ended.
func (a *actor) forward(t0 time.Time) time.Time {
	if h := a.e.hooks.Forward; h != nil {
		h()
	}
	a.e.backend.Forward(a.rows, a.logits)
	end := a.now()
	d := timing.Elapsed(t0, end)
	a.snap.Forwards++
	a.snap.ForwardLast = d
	a.snap.ForwardMax = max(a.snap.ForwardMax, d)
	a.snap.ForwardTotal += d
	return end
}
