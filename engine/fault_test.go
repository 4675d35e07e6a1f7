package engine_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/engine/sampling"
)

// panicSeed makes the test's sample hook panic for that request only.
const panicSeed = 666

func panicOnSeed(s sampling.Params) {
	if s.HasSeed && s.Seed == panicSeed {
		panic("injected sampler fault")
	}
}

// isFailed reports whether the engine's Failed channel is closed.
func isFailed(e *engine.Engine) bool {
	select {
	case <-e.Failed():
		return true
	default:
		return false
	}
}

// TestRequestFaultFailsAlone is the kill switch's first half: a request
// whose sampling panics ends with FinishError and a *Fault carrying the
// stack, while a request batched with it and the next one complete and the
// engine stays Ready.
func TestRequestFaultFailsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(2, 256, 64)
		e := start(t, b, engine.Config{}, engine.WithFaultHooks(engine.FaultHooks{Sample: panicOnSeed}))
		bad := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 4, Sampling: sampling.Params{Seed: panicSeed, HasSeed: true}})
		mate := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 4})
		toks, res := drain(bad)
		var f *engine.Fault
		if len(toks) != 0 || res.Finish != engine.FinishError || !errors.As(res.Err, &f) || !errors.Is(res.Err, engine.ErrFault) {
			t.Fatalf("faulting request: %d tokens, finish %q, err %v; want 0, error, a *Fault", len(toks), res.Finish, res.Err)
		}
		if f.Stage != "sample" || len(f.Stack) == 0 {
			t.Errorf("fault stage %q, %d stack bytes; want sample and a stack", f.Stage, len(f.Stack))
		}
		for name, s := range map[string]*engine.Stream{
			"batched": mate,
			"next":    submit(t, e, t.Context(), engine.Request{Prompt: []int{3}, MaxTokens: 4}),
		} {
			if toks, res := drain(s); len(toks) != 4 || res.Finish != engine.FinishLength {
				t.Errorf("%s request: %d tokens, finish %q (%v); want 4, length", name, len(toks), res.Finish, res.Err)
			}
		}
		if !e.Ready() || isFailed(e) || e.Err() != nil {
			t.Errorf("after a request fault: Ready %v, failed %v, Err %v; want a healthy engine", e.Ready(), isFailed(e), e.Err())
		}
		if b.Held(0) != 0 || b.Held(1) != 0 {
			t.Error("the faulting request's slot was not released")
		}
	})
}

// TestForwardFaultFailsEngine: a panic in the forward pass (shared state
// suspect) fails every request, closes Failed with the *Fault, and the
// engine refuses new work: the process is expected to drain and exit.
func TestForwardFaultFailsEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(2, 256, 64)
		var armed atomic.Bool
		e := start(t, b, engine.Config{}, engine.WithFaultHooks(engine.FaultHooks{Forward: func() {
			if armed.Load() {
				panic("injected forward fault")
			}
		}}))
		if _, res := drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 2})); res.Finish != engine.FinishLength {
			t.Fatalf("before the fault: finish %q", res.Finish)
		}
		armed.Store(true)
		_, res := drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 2}))
		if res.Finish != engine.FinishError || !errors.Is(res.Err, engine.ErrFault) {
			t.Errorf("request in the failed pass: finish %q err %v", res.Finish, res.Err)
		}
		<-e.Failed()
		var f *engine.Fault
		if !errors.As(e.Err(), &f) || f.Stage != "actor" || len(f.Stack) == 0 {
			t.Errorf("Err() = %v; want an actor *Fault with a stack", e.Err())
		}
		if e.Ready() {
			t.Error("Ready after an engine fault")
		}
		if _, err := e.Submit(t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 1}); !errors.Is(err, engine.ErrStopped) {
			t.Errorf("Submit after the fault: %v; want ErrStopped", err)
		}
	})
}

// TestRepeatedFaultsFailEngine: request faults with no success between
// them are a broken engine, not bad requests; one success resets the run.
func TestRepeatedFaultsFailEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 256, 64)
		e := start(t, b, engine.Config{}, engine.WithFaultHooks(engine.FaultHooks{Sample: panicOnSeed}))
		bad := engine.Request{Prompt: []int{1}, MaxTokens: 1, Sampling: sampling.Params{Seed: panicSeed, HasSeed: true}}
		for range 5 {
			drain(submit(t, e, t.Context(), bad))
		}
		drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 1}))
		for i := range 7 {
			drain(submit(t, e, t.Context(), bad))
			if isFailed(e) {
				t.Fatalf("failed after %d faults following a success", i+1)
			}
		}
		drain(submit(t, e, t.Context(), bad))
		synctest.Wait()
		if !isFailed(e) || e.Ready() {
			t.Errorf("8 faults in a row: failed %v, Ready %v; want a failed engine", isFailed(e), e.Ready())
		}
	})
}
