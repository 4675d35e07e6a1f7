package engine_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/engine/llama"
)

// TestResizeKVChargesOnlyQueuedRequests: the real resize through the
// barrier, with exact durations. A is active when the resize is asked for
// and B is enqueued; the actor accepts it at the end of the step in flight,
// A drains its two remaining steps (10 ms), the arena is reallocated (no
// time on the fake clock), and B is admitted. B's first token is charged
// the overlap of its queue wait with the barrier, acceptance to end (10
// ms); A, already active, is charged nothing.
func TestResizeKVChargesOnlyQueuedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = 5 * time.Millisecond
		b := enginetest.NewBackend(2, 256, 64)
		b.StepDelay = step
		e := start(t, b, engine.Config{})
		sa := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 4})
		ta := []engine.Token{<-sa.Tokens()}
		synctest.Wait() // the actor sleeps inside A's second decode step
		type reply struct {
			res engine.ResizeResult
			err error
		}
		done := make(chan reply, 1)
		go func() {
			res, err := e.ResizeKV(t.Context(), 1024, engine.ReasonMaintenance)
			done <- reply{res, err}
		}()
		synctest.Wait()
		sb := submit(t, e, t.Context(), engine.Request{Prompt: []int{2}, MaxTokens: 2})
		restA, _ := drain(sa)
		tb, resB := drain(sb)
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		for i, tok := range append(ta, restA...) {
			if c := chargeOf(tok); c.HasResize || c.HasAdapter {
				t.Errorf("active request A token %d charged %+v", i, c)
			}
		}
		want := barrierCharge{Resize: 10 * time.Millisecond, HasResize: true, ActorQueue: 15 * time.Millisecond}
		if d := cmp.Diff(want, chargeOf(tb[0])); d != "" {
			t.Errorf("queued request B's first token (-want +got):\n%s", d)
		}
		if got := resB.Admitted.Sub(r.res.Start); got != 0 {
			t.Errorf("B admitted %v after the reallocation began, want at once", got)
		}
		if got := r.res.Drained(); got != 10*time.Millisecond {
			t.Errorf("resize drained %v, want A's two remaining steps (10ms)", got)
		}
		got := []int{r.res.FromTokens, r.res.RequestedTokens, r.res.ActualTokens, r.res.FromSlots, r.res.Slots}
		if d := cmp.Diff([]int{512, 1024, 1024, 2, 4}, got); d != "" {
			t.Errorf("[from requested actual from_slots slots] (-want +got):\n%s", d)
		}
		if r.res.BytesBefore != 512*1024 || r.res.BytesAfter != 1024*1024 || r.res.Direction() != engine.ResizeGrow {
			t.Errorf("bytes %d -> %d, %s; want 524288 -> 1048576, grow", r.res.BytesBefore, r.res.BytesAfter, r.res.Direction())
		}
		if s := e.Snapshot(); s.KVBudget != 1024 || s.KVSlots != 4 || s.BarrierResize || s.Mutations != 1 {
			t.Errorf("snapshot after: budget %d slots %d barrier %v mutations %d; want 1024 4 false 1", s.KVBudget, s.KVSlots, s.BarrierResize, s.Mutations)
		}
	})
}

// TestResizeKVChangesAdmission: after a resize to tokens, admission allows
// exactly the requests that fit ceil(tokens/64) slots and a budget of
// tokens positions (each request here reserves 50), growing and shrinking
// from the previous size, and the backend sees only slots below the new
// count.
func TestResizeKVChangesAdmission(t *testing.T) {
	tests := []struct {
		tokens, slots, concurrent int
	}{
		{tokens: 64, slots: 1, concurrent: 1},
		{tokens: 100, slots: 2, concurrent: 2},
		{tokens: 149, slots: 3, concurrent: 2}, // three slots, but 150 positions do not fit
		{tokens: 150, slots: 3, concurrent: 3},
		{tokens: 256, slots: 4, concurrent: 4},
		{tokens: 128, slots: 2, concurrent: 2}, // shrink
	}
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(2, 64, 64)
		b.StepDelay = time.Millisecond
		var mu sync.Mutex
		widest := 0
		b.BeforeForward = func(rows []llama.Row) {
			seen := map[int]bool{}
			for _, r := range rows {
				seen[r.Slot] = true
			}
			mu.Lock()
			widest = max(widest, len(seen))
			mu.Unlock()
		}
		e := start(t, b, engine.Config{KVMaxTokens: 256})
		from := 128
		for _, tc := range tests {
			res, err := e.ResizeKV(t.Context(), tc.tokens, engine.ReasonMaintenance)
			if err != nil {
				t.Fatalf("resize to %d: %v", tc.tokens, err)
			}
			if res.FromTokens != from || res.ActualTokens != tc.tokens || res.Slots != tc.slots || b.Slots() != tc.slots {
				t.Errorf("resize %d -> %d: result %+v, backend slots %d; want %d slots", from, tc.tokens, res, b.Slots(), tc.slots)
			}
			from = tc.tokens
			mu.Lock()
			widest = 0
			mu.Unlock()
			var streams []*engine.Stream
			for i := range 5 {
				streams = append(streams, submit(t, e, t.Context(), engine.Request{Prompt: []int{i + 1}, MaxTokens: 49}))
			}
			for _, s := range streams {
				if _, r := drain(s); r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			mu.Lock()
			if widest != tc.concurrent {
				t.Errorf("budget %d: %d requests ran at once, want %d", tc.tokens, widest, tc.concurrent)
			}
			mu.Unlock()
		}
		if err := b.Err(); err != nil {
			t.Errorf("backend: %v", err)
		}
	})
}

// TestResizeKVRefusesBadSizes: below one context and beyond the bound are
// ErrInvalidKVSize naming the bound, and leave the arena as it was.
func TestResizeKVRefusesBadSizes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(2, 64, 64)
		e := start(t, b, engine.Config{KVMaxTokens: 256})
		if got := e.KVMaxTokens(); got != 256 {
			t.Errorf("KVMaxTokens %d, want 256", got)
		}
		for _, tc := range []struct {
			tokens int
			names  string
		}{{0, "one context (64"}, {-5, "one context (64"}, {63, "one context (64"}, {257, "bound of 256"}} {
			_, err := e.ResizeKV(t.Context(), tc.tokens, engine.ReasonMaintenance)
			if !errors.Is(err, engine.ErrInvalidKVSize) || !strings.Contains(err.Error(), tc.names) {
				t.Errorf("resize to %d: %v, want ErrInvalidKVSize naming %q", tc.tokens, err, tc.names)
			}
		}
		if s := e.Snapshot(); s.KVBudget != 128 || s.KVSlots != 2 || s.Mutations != 0 {
			t.Errorf("after refusals: budget %d slots %d mutations %d; want 128 2 0", s.KVBudget, s.KVSlots, s.Mutations)
		}
	})
}

// TestKVMaxTokensDefault: without a configured bound, the bound follows
// physical memory and is never below the start-up budget; a backend that
// cannot resize has none.
func TestKVMaxTokensDefault(t *testing.T) {
	e, err := engine.New(enginetest.NewBackend(2, 64, 64), engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.KVMaxTokens(); got < 128 {
		t.Errorf("default KVMaxTokens %d, below the start-up budget 128", got)
	}
	if _, err := engine.New(enginetest.NewBackend(2, 64, 64), engine.Config{KVBudget: 128, KVMaxTokens: 100}); err == nil {
		t.Error("kv_max_tokens below kv_budget accepted")
	}
}
