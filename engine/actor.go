package engine

import (
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/timing"
)

// pollInterval is how often an actor with nothing to compute retries the
// delivery of tokens blocked on full channels (a consumer that reads does
// not signal the actor).
const pollInterval = time.Millisecond

// actor is the state owned by the actor goroutine. The cycle's steps live
// beside it, one file per stage: admit.go (reap, admit), compute.go
// (ownership, prefill, decode, sample), deliver.go (deliver, finish, end);
// a request's progress is its state (state.go).
type actor struct {
	e       *Engine
	active  []*request // admitted, in admission order; also finishing ones draining
	free    []int      // free slots
	kvUsed  int
	c       counters
	rows    []llama.Row
	logits  [][]float32           // argument of Forward, one entry per row wanting logits
	slotBuf [][]float32           // a logits row per slot
	fresh   []*request            // requests whose logits row is fresh this cycle: sampled next
	snap    timing.EngineSnapshot // published at the end of every cycle

	segs      segments   // recent prefill passes and ownership waits, for Token.Blockers
	prefilled []*request // requests with rows in this cycle's prefill pass

	idleTimer *time.Timer // reused by idle
	faultRun  int         // request faults since the last successful sample

	mut      *mutation  // the accepted barrier mutation, nil when none
	mutGuard PhaseGuard // its barrier interval

	swapErr    error   // why the last swap queued for the queue's head failed
	swapFailed Adapter // the adapter it was for
	// The KV capacity admission checks: the budget in positions and the
	// batch limit (Config's, until a resize changes them: resize.go).
	kvBudget, maxBatch int
	// kvLooked is the part of kvUsed reserved by requests that have
	// looked their prompt up in the prefix cache (lookUp): the cache's
	// bound leaves out the others, which hold no KV yet (fitPrefix).
	kvLooked int
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
	a.kvBudget, a.maxBatch = e.cfg.KVBudget, e.cfg.MaxBatch
	a.snap.KVBudget = e.cfg.KVBudget
	a.snap.KVSlots = n
	a.snap.BatchLimit = e.cfg.MaxBatch
}

func (a *actor) now() time.Time { return a.e.clock.Now() }

// run is the actor goroutine.
func (a *actor) run() {
	e := a.e
	defer close(e.done)
	defer func() {
		if p := recover(); p != nil {
			a.fail(newFault(StageActor, p))
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
	ran := a.trim()
	a.swapForHead()
	ran = a.barrier() || ran
	if a.mut == nil {
		a.admit()
	}
	computed := a.compute()
	if computed {
		a.e.turns.computed()
	}
	advanced := computed || ran
	if a.deliver() {
		advanced = true
	}
	return advanced
}

// recurrentBackend is a backend whose sequences hold a recurrent state
// beside their KV cache (*llama.State of a hybrid model).
type recurrentBackend interface {
	RecurrentBytes() int64        // held now: the slots' and the kept ones
	RecurrentBytesPerSlot() int64 // one sequence's, whatever its length; 0 without recurrent layers
}

// publish copies the actor's counters into the engine's snapshot.
func (a *actor) publish() {
	s := &a.snap
	s.Active, s.Prefilling, s.Draining, s.Blocked = 0, 0, 0, 0
	for _, r := range a.active {
		switch r.state {
		case stateFinishing:
			s.Draining++
		case statePrefilling:
			s.Prefilling++
			s.Active++
		case stateAdmitting, stateDecoding:
			s.Active++
		}
		if r.hasPending && !r.blocked.IsZero() {
			s.Blocked++
		}
	}
	s.KVReserved = a.kvUsed
	if rb, ok := a.e.backend.(recurrentBackend); ok && rb.RecurrentBytesPerSlot() > 0 {
		s.RecurrentBytes, s.Recurrent = rb.RecurrentBytes(), true
	}
	if pb, ok := a.e.backend.(PrefixBackend); ok {
		s.PrefixCache = pb.PrefixStats()
	}
	s.CycleIdleTotal = a.c.idle
	e := a.e
	e.snapMu.Lock()
	e.snap = *s
	e.snapMu.Unlock()
}
