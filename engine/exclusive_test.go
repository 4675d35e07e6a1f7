package engine_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/timing"
)

// maintGap is what one token's gap was charged for ownership.
type maintGap struct {
	Gap, LockWait, Trim time.Duration
	TrimObserved        bool
}

// lockGaps returns the gaps of toks that waited for ownership.
func lockGaps(toks []engine.Token) []maintGap {
	var out []maintGap
	for i := 1; i < len(toks); i++ {
		p := toks[i].Phases
		if p.Backend[timing.BackendGPULockWait] == 0 {
			continue
		}
		out = append(out, maintGap{
			Gap: toks[i].Ready.Sub(toks[i-1].Ready), LockWait: p.Backend[timing.BackendGPULockWait],
			Trim: p.Backend[timing.BackendTrim], TrimObserved: p.Has(timing.BackendTrim),
		})
	}
	return out
}

// TestExclusiveWriterCharging: a writer's wait is gpu_lock_wait for every
// row of the forward invocation that waited behind it, and its trim phase
// is charged only for the part inside the writer's exclusive hold: a plain
// exclusive holder (hold1) ahead of the trim writer (hold2) widens the wait
// but not the trim. Gaps without a wait observe no trim (null).
func TestExclusiveWriterCharging(t *testing.T) {
	tests := []struct {
		name         string
		before, trim time.Duration // a plain exclusive hold queued first, then the trim's work
	}{
		{"wait equals trim (tie: the narrower phase wins in classification)", 0, 30 * time.Millisecond},
		{"wait wider than the trim inside it", 20 * time.Millisecond, 30 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const step = 5 * time.Millisecond
				b := enginetest.NewBackend(2, 256, 64)
				b.StepDelay = step
				e := start(t, b, engine.Config{})
				sa := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 8})
				sb := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 8})
				ta, tb := []engine.Token{<-sa.Tokens()}, []engine.Token{<-sb.Tokens()}
				synctest.Wait() // the actor sleeps inside the next decode step
				writers := make(chan error, 2)
				if tc.before > 0 {
					go func() {
						if err := e.Ownership().Lock(t.Context()); err != nil {
							writers <- err
							return
						}
						time.Sleep(tc.before)
						e.Ownership().Unlock()
						writers <- nil
					}()
					synctest.Wait()
				}
				go func() {
					writers <- e.Exclusive(t.Context(), trimOp(e), func() error {
						time.Sleep(tc.trim)
						return nil
					})
				}()
				restA, _ := drain(sa)
				restB, _ := drain(sb)
				n := 1
				if tc.before > 0 {
					n = 2
				}
				for range n {
					if err := <-writers; err != nil {
						t.Fatal(err)
					}
				}
				wait := tc.before + tc.trim
				want := []maintGap{{Gap: wait + step, LockWait: wait, Trim: tc.trim, TrimObserved: true}}
				for name, toks := range map[string][]engine.Token{"A": append(ta, restA...), "B": append(tb, restB...)} {
					if d := cmp.Diff(want, lockGaps(toks)); d != "" {
						t.Errorf("request %s gaps with a wait (-want +got):\n%s", name, d)
					}
					for i, tok := range toks {
						if tok.Phases.Backend[timing.BackendGPULockWait] == 0 && tok.Phases.Has(timing.BackendTrim) {
							t.Errorf("request %s token %d: trim observed outside a wait", name, i)
						}
						if !tok.Phases.Has(timing.BackendGPULockWait) {
							t.Errorf("request %s token %d: gpu_lock_wait not measured", name, i)
						}
					}
				}
			})
		})
	}
}

// TestExclusiveFailsOnUnhealthyEngine: a writer never hangs on an engine
// that cannot make progress: a stopped engine fails at once, and a wedged
// actor (stuck inside a forward pass) fails the waiting writer after the
// wedge timeout, with ErrRestartRequired, fn never running.
func TestExclusiveFailsOnUnhealthyEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 64, 64)
		stuck := make(chan struct{})
		b.BeforeForward = func([]llama.Row) { <-stuck }
		e, err := engine.New(b, engine.Config{}, engine.WithWedgeTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ran := false
		fn := func() error { ran = true; return nil }
		if err := e.Exclusive(t.Context(), trimOp(e), fn); !errors.Is(err, engine.ErrRestartRequired) {
			t.Errorf("not started: %v, want ErrRestartRequired", err)
		}
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 4})
		synctest.Wait() // the actor is stuck in its first forward pass
		t0 := time.Now()
		err = e.Exclusive(t.Context(), trimOp(e), fn)
		if !errors.Is(err, engine.ErrRestartRequired) || ran {
			t.Errorf("wedged: %v (fn ran: %v), want ErrRestartRequired", err, ran)
		}
		if waited := time.Since(t0); waited < time.Second || waited > 2*time.Second {
			t.Errorf("wedged writer gave up after %v, want within [1s, 2s]", waited)
		}
		close(stuck)
		drain(s)
		if err := e.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := e.Exclusive(t.Context(), trimOp(e), fn); !errors.Is(err, engine.ErrRestartRequired) || ran {
			t.Errorf("after shutdown: %v, want ErrRestartRequired", err)
		}
	})
}

// TestExclusiveLeavesATurn: an operation that holds ownership slice after
// slice leaves the actor one forward invocation between two of its holds
// even when the actor was not waiting for the lock when a slice ended, so
// no gap of a decoding request spans two slices; and an idle actor does
// not delay the next slice.
func TestExclusiveLeavesATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, slice = 3 * time.Millisecond, 20 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{CycleIdle: 2 * time.Millisecond})
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 30})
		<-s.Tokens()
		op := trimOp(e)
		for range 10 {
			if err := e.Exclusive(t.Context(), op, func() error { time.Sleep(slice); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		toks, _ := drain(s)
		for i := 1; i < len(toks); i++ {
			if g := toks[i].Ready.Sub(toks[i-1].Ready); g >= 2*slice {
				t.Errorf("token %d: gap %v spans two slices of %v", i, g, slice)
			}
		}
		idle := time.Now()
		for range 3 {
			if err := e.Exclusive(t.Context(), op, func() error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(idle); d != 0 {
			t.Errorf("three empty holds on an idle engine took %v, want no wait", d)
		}
	})
}
