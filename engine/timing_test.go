package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/timing"
)

// In these tests the fake backend sleeps inside testing/synctest, so every
// duration is exact: the actor's own work takes no fake time.

// TestCancelFreesSlotWithinCycle: once a request's context ends, the forward
// pass in flight is the last that can include it; its slot and KV memory are
// released before the next one, and its stream ends with FinishCancelled
// while the other request continues.
func TestCancelFreesSlotWithinCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(2, 256, 64)
		b.StepDelay = 10 * time.Millisecond
		e := start(t, b, engine.Config{})
		ctx, cancel := context.WithCancel(t.Context())
		sa := submit(t, e, ctx, engine.Request{Prompt: []int{1, 2}, MaxTokens: 200})
		for range 3 {
			<-sa.Tokens()
		}
		slot := b.Events()[0].Rows[0].Slot
		sb := submit(t, e, t.Context(), engine.Request{Prompt: []int{3}, MaxTokens: 20})
		<-sb.Tokens()

		synctest.Wait() // the actor sleeps inside a forward pass
		before := len(b.Events())
		cancel()
		toksA, resA := drain(sa)
		toksB, resB := drain(sb)

		if resA.Finish != engine.FinishCancelled || resB.Finish != engine.FinishLength {
			t.Errorf("finish: cancelled request %q, other %q", resA.Finish, resB.Finish)
		}
		if len(toksB) != 19 {
			t.Errorf("other request got %d more tokens, want 19", len(toksB))
		}
		after := b.Events()[before:]
		released := -1
		for i, ev := range after {
			if ev.Release && ev.Slot == slot {
				released = i
				break
			}
		}
		if released < 0 || released > 1 {
			t.Fatalf("slot %d released at event %d after the cancel, want within one forward pass: %+v", slot, released, after)
		}
		for _, ev := range after[released+1:] {
			for _, r := range ev.Rows {
				if r.Slot == slot {
					t.Fatalf("slot %d computed after its release: %+v", slot, ev)
				}
			}
		}
		if b.Held(slot) != 0 {
			t.Errorf("slot %d still holds %d positions", slot, b.Held(slot))
		}
		s := e.Snapshot()
		if s.Cancellations != 1 || s.Active != 0 || s.KVReserved != 0 {
			t.Errorf("snapshot: %d cancellations, %d active, %d KV reserved; want 1, 0, 0", s.Cancellations, s.Active, s.KVReserved)
		}
		if n := len(toksA); n > 0 && toksA[n-1].Ready.After(toksB[0].Ready) {
			t.Errorf("cancelled request got a token after the cancel was seen: %+v", toksA[n-1])
		}
	})
}

// TestCancelQueued: a request cancelled while it waits for admission ends
// without being admitted and leaves the queue.
func TestCancelQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 64, 64)
		b.StepDelay = time.Millisecond
		e := start(t, b, engine.Config{})
		s1 := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 50})
		ctx, cancel := context.WithCancel(t.Context())
		s2 := submit(t, e, ctx, engine.Request{Prompt: []int{2}, MaxTokens: 5})
		synctest.Wait()
		cancel()
		toks, res := drain(s2)
		if len(toks) != 0 || res.Finish != engine.FinishCancelled || !res.Admitted.IsZero() {
			t.Errorf("queued cancel: %d tokens, finish %q, admitted %v", len(toks), res.Finish, res.Admitted)
		}
		if got := e.Snapshot().QueueDepth; got != 0 {
			t.Errorf("QueueDepth = %d after the cancel", got)
		}
		drain(s1)
	})
}

// TestStalledConsumerEvicted: a consumer that stops reading is evicted once
// its request has been blocked longer than the grace; meanwhile the other
// request keeps its cadence (every gap one decode step).
func TestStalledConsumerEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, grace = 10 * time.Millisecond, 100 * time.Millisecond
		b := enginetest.NewBackend(2, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{DeliveryBuffer: 2, EvictGrace: grace})
		stalled := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 200})
		reader := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 40})
		toks, res := drain(reader)
		if res.Finish != engine.FinishLength || len(toks) != 40 {
			t.Fatalf("reader: %d tokens, finish %q", len(toks), res.Finish)
		}
		for i := 1; i < len(toks); i++ {
			if gap := toks[i].Ready.Sub(toks[i-1].Ready); gap != step {
				t.Errorf("reader gap %d = %v, want one step %v", i, gap, step)
			}
		}
		checkPhases(t, toks, res.Submitted)

		stalledToks, sres := drain(stalled)
		if sres.Finish != engine.FinishEvicted {
			t.Fatalf("stalled: finish %q, want evicted", sres.Finish)
		}
		if len(stalledToks) != 2 || sres.Generated != 3 {
			t.Errorf("stalled: %d tokens buffered, %d generated; want 2 and 3 (the third pending)", len(stalledToks), sres.Generated)
		}
		s := e.Snapshot()
		if s.Evictions != 1 || s.BlockedEvents != 1 || s.Active != 0 {
			t.Errorf("snapshot: %d evictions, %d blocked events, %d active", s.Evictions, s.BlockedEvents, s.Active)
		}
		// Blocked from its third token (ready after 2 steps) for more than
		// the grace, evicted at the next cycle boundary.
		if s.BlockedTotal != 0 {
			t.Errorf("BlockedTotal = %v, want 0 (an evicted request never unblocked)", s.BlockedTotal)
		}
	})
}

// TestSlowConsumerResumes: a consumer that pauses for less than the grace
// resumes where it left off with no token lost, and the pause is counted as
// delivery backpressure.
func TestSlowConsumerResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = time.Millisecond
		e := start(t, b, engine.Config{DeliveryBuffer: 1, EvictGrace: time.Second})
		prompt := []int{5, 6}
		s := submit(t, e, t.Context(), engine.Request{Prompt: prompt, MaxTokens: 10})
		first := <-s.Tokens()
		time.Sleep(50 * time.Millisecond)
		toks, res := drain(s)
		toks = append([]engine.Token{first}, toks...)
		if d := cmp.Diff(enginetest.Greedy(prompt, 10, 64), ids(toks)); d != "" {
			t.Errorf("ids (-want +got):\n%s", d)
		}
		if res.Finish != engine.FinishLength {
			t.Errorf("finish %q", res.Finish)
		}
		checkPhases(t, toks, res.Submitted)
		snap := e.Snapshot()
		if snap.BlockedEvents == 0 || snap.BlockedTotal == 0 || snap.Evictions != 0 {
			t.Errorf("snapshot: %d blocked events, %v blocked, %d evictions", snap.BlockedEvents, snap.BlockedTotal, snap.Evictions)
		}
	})
}

// TestLongPromptIsPrefillInOthersGaps: a long prompt admitted while another
// request decodes is prefilled one chunk per cycle, and each chunk appears
// as actor_prefill in the decoding request's next gap, which it fully
// explains together with that step's decode.
func TestLongPromptIsPrefillInOthersGaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const row, chunk, long = time.Millisecond, 8, 40
		b := enginetest.NewBackend(2, 256, 64)
		b.RowDelay = row
		e := start(t, b, engine.Config{PrefillChunk: chunk})
		sa := submit(t, e, t.Context(), engine.Request{Prompt: []int{1, 2}, MaxTokens: 30})
		var toks []engine.Token
		for range 3 {
			toks = append(toks, <-sa.Tokens())
		}
		synctest.Wait() // the actor sleeps inside A's next decode step
		sb := submit(t, e, t.Context(), engine.Request{Prompt: make([]int, long), MaxTokens: 2})
		rest, res := drain(sa)
		toks = append(toks, rest...)
		btoks, bres := drain(sb)
		checkPhases(t, toks, res.Submitted)
		checkPhases(t, btoks, bres.Submitted)

		var prefillGaps []time.Duration
		for i := 1; i < len(toks); i++ {
			p := toks[i].Phases
			gap := toks[i].Ready.Sub(toks[i-1].Ready)
			if p.Prefill > 0 {
				prefillGaps = append(prefillGaps, p.Prefill)
			}
			if got := p.Prefill + p.Decode; got != gap {
				t.Errorf("gap %d = %v, prefill %v + decode %v = %v", i, gap, p.Prefill, p.Decode, got)
			}
		}
		want := []time.Duration{chunk * row, chunk * row, chunk * row, chunk * row, chunk * row}
		if d := cmp.Diff(want, prefillGaps); d != "" {
			t.Errorf("prefill in A's gaps (-want +got):\n%s", d)
		}
		if got := btoks[0].Phases.Prefill; got != long*row {
			t.Errorf("B's first token: prefill %v, want %v", got, long*row)
		}
	})
}

// TestOwnershipWaitIsLockWait: an exclusive holder of device ownership makes
// the actor wait; the wait appears as gpu_lock_wait (inside decode) in the
// waiting request's gap.
func TestOwnershipWaitIsLockWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, hold = 5 * time.Millisecond, 50 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{})
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 10})
		var toks []engine.Token
		for range 3 {
			toks = append(toks, <-s.Tokens())
		}
		if err := e.Ownership().Lock(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if shared, _ := e.Ownership().Waiting(); shared != 1 {
			t.Errorf("actor not waiting for ownership (%d shared waiters)", shared)
		}
		time.Sleep(hold)
		e.Ownership().Unlock()
		rest, res := drain(s)
		toks = append(toks, rest...)
		checkPhases(t, toks, res.Submitted)

		var waits []time.Duration
		for i := 1; i < len(toks); i++ {
			p := toks[i].Phases
			if w := p.Backend[timing.BackendGPULockWait]; w > 0 {
				waits = append(waits, w)
				if gap := toks[i].Ready.Sub(toks[i-1].Ready); gap != hold+step || p.Decode != gap {
					t.Errorf("gap %d = %v with decode %v, want both %v", i, gap, p.Decode, hold+step)
				}
			}
		}
		if d := cmp.Diff([]time.Duration{hold}, waits); d != "" {
			t.Errorf("gpu_lock_wait per gap (-want +got):\n%s", d)
		}
		if got := e.Snapshot().LockWaitTotal; got != hold {
			t.Errorf("LockWaitTotal = %v, want %v", got, hold)
		}
	})
}

// TestCycleIdle: the cooperative idle after each cycle that advanced work
// appears as actor_cycle_idle in the next gap.
func TestCycleIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, idle = 2 * time.Millisecond, 3 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{CycleIdle: idle})
		toks, res := drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 5}))
		checkPhases(t, toks, res.Submitted)
		for i := 1; i < len(toks); i++ {
			p := toks[i].Phases
			got := [3]time.Duration{toks[i].Ready.Sub(toks[i-1].Ready), p.CycleIdle, p.Decode}
			if want := [3]time.Duration{step + idle, idle, step}; got != want {
				t.Errorf("gap %d: (gap, idle, decode) = %v, want %v", i, got, want)
			}
		}
		if got := e.Snapshot().CycleIdleTotal; got < 4*idle {
			t.Errorf("CycleIdleTotal = %v, want at least %v", got, 4*idle)
		}
	})
}

// TestFirstTokenActorQueue: a request that waits for a slot reports the
// wait as actor_queue on its first token, and only there.
func TestFirstTokenActorQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = 4 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{})
		s1 := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 5})
		synctest.Wait()
		s2 := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 3})
		toks1, res1 := drain(s1)
		toks2, res2 := drain(s2)
		checkPhases(t, toks1, res1.Submitted)
		checkPhases(t, toks2, res2.Submitted)
		// Request 1 runs 5 steps (prefill+sample, then 4 decodes); request
		// 2 was submitted during the first and admitted after the last.
		if got, want := toks2[0].Phases.ActorQueue, 5*step; got != want {
			t.Errorf("actor queue = %v, want %v", got, want)
		}
		if got, want := res2.Admitted.Sub(res2.Submitted), 5*step; got != want {
			t.Errorf("admitted - submitted = %v, want %v", got, want)
		}
		// Admission itself takes no fake time: it ends where it began,
		// before the prefill.
		for i, res := range []engine.Result{res1, res2} {
			if res.AdmissionDone.IsZero() || !res.AdmissionDone.Equal(res.Admitted) || res.PrefillDone.Before(res.AdmissionDone) {
				t.Errorf("request %d: admitted %v, admission done %v, prefill done %v", i+1, res.Admitted, res.AdmissionDone, res.PrefillDone)
			}
		}
	})
}

// TestShutdownEndsInFlight: Shutdown ends queued and in-flight requests with
// FinishError / ErrStopped, frees their slots, and is idempotent; Shutdown
// without Start is a no-op.
func TestShutdownEndsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = time.Millisecond
		e, err := engine.New(b, engine.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Shutdown(t.Context()); err != nil {
			t.Fatalf("Shutdown without Start: %v", err)
		}
		e, err = engine.New(b, engine.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !e.Ready() {
			t.Error("not Ready after Start")
		}
		running := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 100})
		queued := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 100})
		<-running.Tokens()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if err := e.Shutdown(t.Context()); err != nil {
					t.Errorf("Shutdown: %v", err)
				}
			})
		}
		wg.Wait()
		for name, s := range map[string]*engine.Stream{"running": running, "queued": queued} {
			_, res := drain(s)
			if res.Finish != engine.FinishError || !isErr(res.Err, engine.ErrStopped) {
				t.Errorf("%s: finish %q err %v, want error / ErrStopped", name, res.Finish, res.Err)
			}
		}
		if b.Held(0) != 0 {
			t.Error("slot not released at shutdown")
		}
		if e.Ready() || e.Snapshot().Ready {
			t.Error("Ready after Shutdown")
		}
	})
}

// TestBackendPanic: a panicking backend fails every request with
// FinishError and leaves the engine not ready, refusing new work.
func TestBackendPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 256, 64)
		b.BeforeForward = func([]llama.Row) { panic("boom") }
		e := start(t, b, engine.Config{})
		_, res := drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 3}))
		if res.Finish != engine.FinishError || res.Err == nil {
			t.Errorf("finish %q err %v", res.Finish, res.Err)
		}
		if e.Ready() {
			t.Error("Ready after the actor failed")
		}
		if _, err := e.Submit(t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 1}); !isErr(err, engine.ErrStopped) {
			t.Errorf("Submit after failure: %v", err)
		}
	})
}

// TestLastTokenPendingFreesSlot: a request whose last token waits for room
// in its channel no longer holds its slot, so a queued request runs while
// the slow consumer has not read; the slow consumer still gets every token.
func TestLastTokenPendingFreesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 64, 64)
		b.StepDelay = time.Millisecond
		e := start(t, b, engine.Config{DeliveryBuffer: 1, EvictGrace: time.Hour})
		slow := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 2})
		next := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 5})
		if toks, res := drain(next); len(toks) != 5 || res.Finish != engine.FinishLength {
			t.Fatalf("queued request: %d tokens, finish %q", len(toks), res.Finish)
		}
		// The stream closes before the actor's cycle ends and publishes
		// its snapshot: wait until the actor is idle (without, the check
		// raced the publish and failed once in a loaded package run).
		synctest.Wait()
		if s := e.Snapshot(); s.Draining != 1 || s.Active != 0 {
			t.Errorf("snapshot: %d draining, %d active; want 1, 0", s.Draining, s.Active)
		}
		toks, res := drain(slow)
		if d := cmp.Diff(enginetest.Greedy([]int{1}, 2, 64), ids(toks)); d != "" {
			t.Errorf("slow consumer ids (-want +got):\n%s", d)
		}
		if res.Finish != engine.FinishLength {
			t.Errorf("slow consumer finish %q", res.Finish)
		}
	})
}

// blockersOf returns a token's blockers as a slice.
func blockersOf(tok engine.Token) []engine.Blocker {
	return append([]engine.Blocker(nil), tok.Blockers[:tok.NumBlockers]...)
}

// TestBlockersNamePrefill: the prefill chunks of a long prompt admitted
// while another request decodes are that request's next gaps' blockers,
// named by the long request's ID with the chunks' exact instants; the
// long request's own chunks are the blockers of its first token (the
// largest four, the earliest first on equal durations); a pass holding two
// prompts names both, with the same instants.
func TestBlockersNamePrefill(t *testing.T) {
	const row = time.Millisecond
	tests := []struct {
		name   string
		chunk  int
		others []int // prompt lengths submitted together while A decodes
	}{
		{"one long prompt in chunks", 8, []int{40}},
		{"two prompts in one pass", 64, []int{6, 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := enginetest.NewBackend(4, 256, 64)
				b.RowDelay = row
				e := start(t, b, engine.Config{PrefillChunk: tc.chunk})
				const idA = 7
				sa := submit(t, e, t.Context(), engine.Request{Prompt: []int{1, 2}, MaxTokens: 30, ID: idA})
				var toks []engine.Token
				for range 3 {
					toks = append(toks, <-sa.Tokens())
				}
				synctest.Wait() // the actor sleeps inside A's next decode step
				var others []*engine.Stream
				for k, n := range tc.others {
					others = append(others, submit(t, e, t.Context(), engine.Request{Prompt: make([]int, n), MaxTokens: 2, ID: uint64(100 + k)}))
				}
				rest, res := drain(sa)
				toks = append(toks, rest...)
				checkPhases(t, toks, res.Submitted)

				// A's first token: its own 2-row prefill.
				want := []engine.Blocker{{Kind: engine.BlockerPrefill, Request: idA, Start: res.Admitted, End: res.PrefillDone}}
				if d := cmp.Diff(want, blockersOf(toks[0])); d != "" {
					t.Errorf("A's first token blockers (-want +got):\n%s", d)
				}
				if got := res.PrefillDone.Sub(res.Admitted); got != 2*row {
					t.Errorf("A's prefill took %v, want %v", got, 2*row)
				}

				// A's later gaps: exactly the prefill passes, each from the
				// previous token's ready instant, as long as its rows.
				var got, wantGaps [][]engine.Blocker
				remaining := append([]int(nil), tc.others...)
				for i := 1; i < len(toks); i++ {
					if toks[i].NumBlockers == 0 {
						if toks[i].Phases.Prefill != 0 {
							t.Errorf("A's gap %d has prefill %v and no blocker", i, toks[i].Phases.Prefill)
						}
						continue
					}
					got = append(got, blockersOf(toks[i]))
					start := toks[i-1].Ready
					rows, pass := 0, []engine.Blocker(nil)
					for k := range remaining {
						n := min(remaining[k], tc.chunk-rows)
						if n == 0 {
							continue
						}
						rows += n
						remaining[k] -= n
						pass = append(pass, engine.Blocker{Kind: engine.BlockerPrefill, Request: uint64(100 + k)})
					}
					for k := range pass {
						pass[k].Start, pass[k].End = start, start.Add(time.Duration(rows)*row)
					}
					wantGaps = append(wantGaps, pass)
				}
				if d := cmp.Diff(wantGaps, got); d != "" {
					t.Errorf("A's gap blockers (-want +got):\n%s", d)
				}

				// Each other request's first token: every pass from its
				// submission to the one that completed its prompt (its own
				// chunks and those it shared), largest first, the earliest
				// first on equal durations, at most MaxBlockers.
				for k, s := range others {
					btoks, bres := drain(s)
					checkPhases(t, btoks, bres.Submitted)
					var want []engine.Blocker
					for _, pass := range wantGaps {
						if pass[0].Start.Before(bres.Submitted) || pass[0].End.After(bres.PrefillDone) {
							continue
						}
						want = append(want, pass...)
					}
					slices.SortStableFunc(want, func(a, b engine.Blocker) int { return int(b.Duration() - a.Duration()) })
					want = want[:min(len(want), engine.MaxBlockers)]
					if d := cmp.Diff(want, blockersOf(btoks[0])); d != "" {
						t.Errorf("request %d's first token blockers (-want +got):\n%s", 100+k, d)
					}
				}
			})
		})
	}
}

// TestBlockersNameLockWait: an exclusive holder of device ownership is the
// blocker of the waiting request's next token, as a lock wait with the
// wait's exact instants; the tokens before and after have none.
func TestBlockersNameLockWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, hold = 5 * time.Millisecond, 50 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{})
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 10, ID: 3})
		var toks []engine.Token
		for range 3 {
			toks = append(toks, <-s.Tokens())
		}
		if err := e.Ownership().Lock(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the actor waits for ownership
		locked := time.Now()
		time.Sleep(hold)
		e.Ownership().Unlock()
		rest, res := drain(s)
		toks = append(toks, rest...)
		checkPhases(t, toks, res.Submitted)

		var got []engine.Blocker
		for i := 1; i < len(toks); i++ {
			got = append(got, blockersOf(toks[i])...)
		}
		want := []engine.Blocker{{Kind: engine.BlockerLockWait, Start: locked, End: locked.Add(hold)}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("blockers after the first token (-want +got):\n%s", d)
		}
	})
}
