package engine_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
)

// TestTrimWhileDecoding: a trim asked while a request decodes waits for the
// forward step in flight (the actor is idle only between invocations),
// runs under exclusive ownership, and the request's next gap is charged
// the trim as gpu_lock_wait and as trim, equally (a tie the narrower trim
// wins); the other gaps observe no trim. The counters record one
// reclaiming attempt and its bytes.
func TestTrimWhileDecoding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, work = 5 * time.Millisecond, 30 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay, b.ReclaimDelay, b.ReclaimBytes = step, work, 4096
		e := start(t, b, engine.Config{})
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 6})
		toks := []engine.Token{<-s.Tokens(), <-s.Tokens()}
		synctest.Wait() // the actor sleeps inside the third token's step
		time.Sleep(2 * time.Millisecond)
		res, err := e.Trim(t.Context(), engine.ReasonMaintenance)
		if err != nil {
			t.Fatal(err)
		}
		rest, r := drain(s)
		toks = append(toks, rest...)
		checkPhases(t, toks, r.Submitted)

		type got struct {
			Deferred, Duration time.Duration
			BackendBytes       int64
			Gaps               []maintGap
		}
		want := got{Deferred: step - 2*time.Millisecond, Duration: work, BackendBytes: 4096,
			Gaps: []maintGap{{Gap: work + step, LockWait: work, Trim: work, TrimObserved: true}}}
		if d := cmp.Diff(want, got{res.Deferred, res.Duration, res.BackendBytes, lockGaps(toks)}); d != "" {
			t.Errorf("trim (-want +got):\n%s", d)
		}
		if res.Reclaimed() < res.BackendBytes || res.HeapReleased < 0 {
			t.Errorf("reclaimed %d < backend %d, heap released %d", res.Reclaimed(), res.BackendBytes, res.HeapReleased)
		}
		snap := e.Snapshot()
		if snap.ReclaimReclaimed != 1 || snap.ReclaimZeroYield != 0 || snap.ReclaimedBytes != uint64(res.Reclaimed()) || snap.ReclaimLast != work {
			t.Errorf("snapshot: %d reclaimed, %d zero yield, %d bytes, last %v", snap.ReclaimReclaimed, snap.ReclaimZeroYield, snap.ReclaimedBytes, snap.ReclaimLast)
		}
	})
}

// TestTrimIdleAndConcurrent: on an idle engine a trim runs at once;
// calls made during one forward step share one trim; a stopped engine
// refuses with ErrRestartRequired.
func TestTrimIdleAndConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 64, 64)
		b.ReclaimDelay = time.Millisecond
		b.StepDelay = time.Millisecond
		e := start(t, b, engine.Config{})
		if res, err := e.Trim(t.Context(), engine.ReasonMaintenance); err != nil || res.Deferred != 0 || res.Duration != time.Millisecond {
			t.Errorf("idle trim: %+v, %v; want no deferral, 1ms", res, err)
		}
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 8})
		<-s.Tokens()
		synctest.Wait() // inside a forward step
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := e.Trim(t.Context(), engine.ReasonMaintenance)
				errs <- err
			}()
		}
		synctest.Wait()
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		drain(s)
		if n := b.Reclaims(); n != 2 {
			t.Errorf("%d backend reclaims for one trim and 3 concurrent ones, want 2", n)
		}
		if err := e.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Trim(t.Context(), engine.ReasonMaintenance); !errors.Is(err, engine.ErrRestartRequired) {
			t.Errorf("trim after shutdown: %v, want ErrRestartRequired", err)
		}
	})
}
