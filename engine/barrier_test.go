package engine_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/internal/timing"
)

// barrierCharge is what a token was charged for the actor barrier.
type barrierCharge struct {
	Resize, Adapter       time.Duration
	HasResize, HasAdapter bool
	ActorQueue            time.Duration
}

func chargeOf(tok engine.Token) barrierCharge {
	p := tok.Phases
	return barrierCharge{
		Resize: p.Backend[timing.BackendResize], Adapter: p.Backend[timing.BackendAdapter],
		HasResize: p.Has(timing.BackendResize), HasAdapter: p.Has(timing.BackendAdapter),
		ActorQueue: p.ActorQueue,
	}
}

// TestBarrierChargesOnlyQueuedRequests: docs/maintenance.md section 4 with exact
// durations. A is active when a resize (40 ms) and then an adapter swap
// (10 ms) are queued and B is enqueued; the actor accepts the resize at the
// end of the forward step in flight (admission pauses, though a slot is
// free), A drains its two remaining steps, the mutations run in order, and
// B is admitted when the FIFO is empty. B's first token is charged the
// overlap of its queue wait with each interval (resize: acceptance to its
// end, 10 + 40 ms; adapter: 10 ms); A, already active, is charged nothing.
// The resize gauge is up from acceptance to completion.
func TestBarrierChargesOnlyQueuedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = 5 * time.Millisecond
		b := enginetest.NewBackend(2, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{})
		sa := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 4})
		ta := []engine.Token{<-sa.Tokens()}
		synctest.Wait() // the actor sleeps inside A's second decode step
		log := &enginetest.Log{}
		var gauge []bool
		resize := &enginetest.Mutation{Name: "resize", Slot: engine.PhaseResize, Delay: 40 * time.Millisecond, Log: log,
			OnApply: func(engine.Backend) { s := e.Snapshot(); gauge = append(gauge, s.BarrierResize, s.BarrierAdapter) }}
		adapter := &enginetest.Mutation{Name: "adapter", Slot: engine.PhaseAdapter, Delay: 10 * time.Millisecond, Log: log}
		errs := make(chan error, 2)
		go func() { errs <- e.Mutate(t.Context(), resize) }()
		synctest.Wait()
		go func() { errs <- e.Mutate(t.Context(), adapter) }()
		synctest.Wait()
		sb := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 2})

		synctest.Wait() // still inside A's step: nothing accepted yet
		if s := e.Snapshot(); s.BarrierResize {
			t.Error("resize barrier up before the actor accepted it")
		}
		time.Sleep(step + time.Millisecond) // the step ended; the barrier was accepted
		if s := e.Snapshot(); !s.BarrierResize || s.QueueDepth != 1 || s.Active != 1 {
			t.Errorf("after acceptance: barrier %v, queue %d, active %d; want true, 1 (B paused), 1 (A drains)", s.BarrierResize, s.QueueDepth, s.Active)
		}
		restA, _ := drain(sa)
		tb, resB := drain(sb)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if d := cmp.Diff([]string{"resize", "adapter"}, log.Names()); d != "" {
			t.Errorf("mutation order (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]bool{true, false}, gauge); d != "" {
			t.Errorf("gauges during the resize [resize adapter] (-want +got):\n%s", d)
		}
		for i, tok := range append(ta, restA...) {
			if c := chargeOf(tok); c.HasResize || c.HasAdapter {
				t.Errorf("active request A token %d charged %+v", i, c)
			}
		}
		want := barrierCharge{Resize: 50 * time.Millisecond, Adapter: 10 * time.Millisecond, HasResize: true, HasAdapter: true, ActorQueue: 65 * time.Millisecond}
		if d := cmp.Diff(want, chargeOf(tb[0])); d != "" {
			t.Errorf("queued request B's first token (-want +got):\n%s", d)
		}
		if c := chargeOf(tb[1]); c.HasResize || c.HasAdapter {
			t.Errorf("B's second token charged %+v", c)
		}
		if got := resB.Admitted.Sub(resB.Submitted); got != want.ActorQueue {
			t.Errorf("B admitted %v after its submission, want %v", got, want.ActorQueue)
		}
		s := e.Snapshot()
		if s.BarrierResize || s.BarrierAdapter || s.Mutations != 2 {
			t.Errorf("after the barrier: resize %v adapter %v, %d mutations; want false false 2", s.BarrierResize, s.BarrierAdapter, s.Mutations)
		}
	})
}

// TestBarrierOnIdleEngine: with nothing active a mutation runs at once,
// its error comes back, and a request enqueued after it is not charged.
func TestBarrierOnIdleEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 64, 64)
		e := start(t, b, engine.Config{})
		boom := errors.New("boom")
		m := &enginetest.Mutation{Slot: engine.PhaseResize, Delay: time.Millisecond, Err: boom}
		if err := e.Mutate(t.Context(), m); !errors.Is(err, boom) {
			t.Errorf("Mutate: %v, want boom", err)
		}
		bad := &enginetest.Mutation{Slot: engine.PhaseTrim}
		if err := e.Mutate(t.Context(), bad); !errors.Is(err, engine.ErrInvalidRequest) {
			t.Errorf("trim as a barrier mutation: %v, want ErrInvalidRequest", err)
		}
		toks, _ := drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 2}))
		if c := chargeOf(toks[0]); c.HasResize || c.HasAdapter {
			t.Errorf("request after the barrier charged %+v", c)
		}
	})
}

// TestBarrierFailsOnShutdown: a mutation waiting behind a draining request
// ends with ErrStopped when the engine shuts down.
func TestBarrierFailsOnShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = time.Millisecond
		e := start(t, b, engine.Config{})
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 200})
		<-s.Tokens()
		errs := make(chan error, 1)
		go func() { errs <- e.Mutate(t.Context(), &enginetest.Mutation{Slot: engine.PhaseAdapter}) }()
		synctest.Wait()
		if err := e.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-errs; !errors.Is(err, engine.ErrStopped) {
			t.Errorf("Mutate: %v, want ErrStopped", err)
		}
		drain(s)
	})
}
