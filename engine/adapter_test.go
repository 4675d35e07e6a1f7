package engine_test

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
)

// TestAdapterSwapChargesQueuedRequest: docs/maintenance.md sections 4 and 5
// with exact durations. Base request A is in its second decode step (5 ms
// each) when B, naming adapter x, is enqueued at t = 6 ms. The actor
// queues x's swap and accepts it when that step ends (t = 10 ms):
// admission pauses although a slot is free, A drains its last two steps
// (to t = 20 ms), the swap runs 10 ms (to t = 30 ms) and B is admitted.
// B's first token is charged the barrier from acceptance, 20 ms of
// adapter; A, already active, is charged nothing, and B's tokens are
// those of B alone with x.
func TestAdapterSwapChargesQueuedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = 5 * time.Millisecond
		b := enginetest.NewBackend(2, 256, 64)
		b.StepDelay = step
		log := &enginetest.Log{}
		sw := &enginetest.Swapper{B: b, Delay: 10 * time.Millisecond, Log: log}
		e := start(t, b, engine.Config{}, engine.WithAdapterSwapper(sw.Swap))
		x := &enginetest.Adapter{Name: "x", Variant: 7}

		sa := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 4})
		ta := []engine.Token{<-sa.Tokens()}
		synctest.Wait()
		time.Sleep(time.Millisecond) // inside A's second decode step
		sb := submit(t, e, t.Context(), engine.Request{Prompt: []int{2, 3}, MaxTokens: 3, Adapter: x})
		time.Sleep(step) // the step ended; the swap was accepted
		if s := e.Snapshot(); !s.BarrierAdapter || s.QueueDepth != 1 || s.Active != 1 {
			t.Errorf("after acceptance: adapter barrier %v, queue %d, active %d; want true, 1 (B waits), 1 (A drains)", s.BarrierAdapter, s.QueueDepth, s.Active)
		}
		restA, resA := drain(sa)
		tb, resB := drain(sb)
		if resA.Err != nil || resB.Err != nil {
			t.Fatalf("results: A %v, B %v", resA.Err, resB.Err)
		}
		for i, tok := range append(ta, restA...) {
			if c := chargeOf(tok); c.HasResize || c.HasAdapter {
				t.Errorf("active request A token %d charged %+v", i, c)
			}
		}
		want := barrierCharge{Adapter: 20 * time.Millisecond, HasAdapter: true, ActorQueue: 24 * time.Millisecond}
		if d := cmp.Diff(want, chargeOf(tb[0])); d != "" {
			t.Errorf("queued request B's first token (-want +got):\n%s", d)
		}
		if d := cmp.Diff(enginetest.Greedy([]int{1}, 4, 64), ids(append(ta, restA...))); d != "" {
			t.Errorf("A (base) tokens (-want +got):\n%s", d)
		}
		if d := cmp.Diff(enginetest.GreedyVariant([]int{2, 3}, 3, 64, 7), ids(tb)); d != "" {
			t.Errorf("B (adapter x) tokens (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"x/request"}, log.Names()); d != "" {
			t.Errorf("swaps (-want +got):\n%s", d)
		}
		if got := e.LoadedAdapter(); got != engine.Adapter(x) {
			t.Errorf("loaded adapter %v, want x", got)
		}
		if err := b.Err(); err != nil {
			t.Error(err)
		}
	})
}

// TestAdapterBatchesNeverMix: base and adapter requests submitted
// interleaved never share a forward invocation, every row runs with its
// request's adapter in place, FIFO order decides the swaps (no request
// starves), and every output equals the request alone with its adapter.
func TestAdapterBatchesNeverMix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(4, 256, 64)
		b.StepDelay = time.Millisecond
		log := &enginetest.Log{}
		sw := &enginetest.Swapper{B: b, Delay: 2 * time.Millisecond, Log: log}
		e := start(t, b, engine.Config{}, engine.WithAdapterSwapper(sw.Swap))
		x := &enginetest.Adapter{Name: "x", Variant: 3}
		y := &enginetest.Adapter{Name: "y", Variant: 5}
		// The first prompt token says which adapter a slot's rows need.
		plan := []struct {
			first   int
			adapter *enginetest.Adapter
		}{{10, nil}, {11, nil}, {20, x}, {12, nil}, {21, x}, {30, y}, {22, x}}
		variantOf := map[int]uint64{}
		streams := make([]*engine.Stream, len(plan))
		for i, p := range plan {
			r := engine.Request{Prompt: []int{p.first, 1, 2}, MaxTokens: 4}
			if p.adapter != nil {
				r.Adapter = p.adapter
				variantOf[p.first] = p.adapter.Variant
			}
			streams[i] = submit(t, e, t.Context(), r)
		}
		for i, s := range streams {
			toks, res := drain(s)
			if res.Err != nil {
				t.Fatalf("request %d: %v", i, res.Err)
			}
			want := enginetest.GreedyVariant([]int{plan[i].first, 1, 2}, 4, 64, variantOf[plan[i].first])
			if d := cmp.Diff(want, ids(toks)); d != "" {
				t.Errorf("request %d (-alone +batched):\n%s", i, d)
			}
		}
		owner := map[int]int{} // slot -> first prompt token of its request
		for n, ev := range b.Events() {
			for _, r := range ev.Rows {
				if r.Pos == 0 {
					owner[r.Slot] = r.Token
				}
				if v := variantOf[owner[r.Slot]]; v != ev.Variant {
					t.Fatalf("forward %d ran with variant %d a row of the request of prompt %d (variant %d)", n, ev.Variant, owner[r.Slot], v)
				}
			}
		}
		if d := cmp.Diff([]string{"x/request", "base/request", "x/request", "y/request", "x/request"}, log.Names()); d != "" {
			t.Errorf("swaps in FIFO order (-want +got):\n%s", d)
		}
		if err := b.Err(); err != nil {
			t.Error(err)
		}
	})
}

// TestSwapAdapterSetsDefault: SwapAdapter changes the loaded adapter (the
// server default) through the barrier; requests naming none of another
// run with it; nil swaps back to base; an engine without a swapper
// refuses adapters.
func TestSwapAdapterSetsDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 64, 64)
		log := &enginetest.Log{}
		sw := &enginetest.Swapper{B: b, Log: log}
		e := start(t, b, engine.Config{}, engine.WithAdapterSwapper(sw.Swap))
		x := &enginetest.Adapter{Name: "x", Variant: 9}
		if err := e.SwapAdapter(t.Context(), x, "load"); err != nil {
			t.Fatal(err)
		}
		if e.LoadedAdapter() != engine.Adapter(x) {
			t.Errorf("loaded %v, want x", e.LoadedAdapter())
		}
		toks, _ := drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{4}, MaxTokens: 3, Adapter: x}))
		if d := cmp.Diff(enginetest.GreedyVariant([]int{4}, 3, 64, 9), ids(toks)); d != "" {
			t.Errorf("with x loaded (-want +got):\n%s", d)
		}
		if err := e.SwapAdapter(t.Context(), nil, "unload"); err != nil {
			t.Fatal(err)
		}
		if e.LoadedAdapter() != nil {
			t.Errorf("loaded %v after unload, want base", e.LoadedAdapter())
		}
		if d := cmp.Diff([]string{"x/load", "base/unload"}, log.Names()); d != "" {
			t.Errorf("swaps (-want +got):\n%s", d)
		}

		plain := start(t, enginetest.NewBackend(1, 64, 64), engine.Config{})
		if _, err := plain.Submit(t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 1, Adapter: x}); !errors.Is(err, engine.ErrNoAdapters) || !errors.Is(err, engine.ErrInvalidRequest) {
			t.Errorf("adapter on an engine without a swapper: %v, want ErrNoAdapters", err)
		}
		if err := plain.SwapAdapter(t.Context(), x, "load"); !errors.Is(err, engine.ErrNoAdapters) {
			t.Errorf("SwapAdapter without a swapper: %v, want ErrNoAdapters", err)
		}
	})
}

// TestAdapterSwapFailureEndsHead: when the swap a queued request needs
// fails, that request ends with the error (no retry loop), the loaded
// adapter is unchanged, and the engine keeps serving.
func TestAdapterSwapFailureEndsHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 64, 64)
		boom := errors.New("boom")
		sw := &enginetest.Swapper{B: b, Err: boom}
		e := start(t, b, engine.Config{}, engine.WithAdapterSwapper(sw.Swap))
		x := &enginetest.Adapter{Name: "x", Variant: 1}
		toks, res := drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{4}, MaxTokens: 3, Adapter: x}))
		if len(toks) != 0 || res.Finish != engine.FinishError || !errors.Is(res.Err, boom) {
			t.Errorf("request behind a failed swap: %d tokens, %v, %v; want 0, error, boom", len(toks), res.Finish, res.Err)
		}
		if e.LoadedAdapter() != nil {
			t.Errorf("loaded %v after a failed swap, want base", e.LoadedAdapter())
		}
		toks, res = drain(submit(t, e, t.Context(), engine.Request{Prompt: []int{4}, MaxTokens: 3}))
		if res.Err != nil || fmt.Sprint(ids(toks)) != fmt.Sprint(enginetest.Greedy([]int{4}, 3, 64)) {
			t.Errorf("base request after the failure: %v %v", ids(toks), res.Err)
		}
	})
}
