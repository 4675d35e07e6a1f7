package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/sampling"
)

// prompts returns n prompts of different lengths over vocab.
func prompts(n, vocab int) [][]int {
	out := make([][]int, n)
	for i := range out {
		p := make([]int, 1+(i*7)%19)
		for j := range p {
			p[j] = (i*31 + j*17 + 1) % vocab
		}
		out[i] = p
	}
	return out
}

// TestBatchingInvisibleFake: on a backend whose logits depend only on a
// slot's history, greedy outputs of 1 to 8 concurrent requests of different
// prompt lengths, admitted at different cycles and prefilled in small
// chunks, equal the reference computed for each alone; seeded sampling at a
// temperature equals the same request run alone.
func TestBatchingInvisibleFake(t *testing.T) {
	const vocab, maxTokens = 64, 24
	for _, sampling := range []sampling.Params{
		{},
		{Temperature: 0.9, TopK: 20, TopP: 0.9, Seed: 7, HasSeed: true},
	} {
		for n := 1; n <= 8; n++ {
			t.Run(fmt.Sprintf("temp%v/n%d", sampling.Temperature, n), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := engine.Config{PrefillChunk: 5, MaxBatch: 6}
					ps := prompts(n, vocab)

					// Each request alone, one engine each.
					want := make([][]int, n)
					for i, p := range ps {
						b := enginetest.NewBackend(8, 64, vocab)
						e := start(t, b, cfg)
						toks, res := drain(submit(t, e, t.Context(), engine.Request{Prompt: p, MaxTokens: maxTokens, Sampling: sampling}))
						if res.Finish != engine.FinishLength {
							t.Fatalf("alone %d: finish %q", i, res.Finish)
						}
						want[i] = ids(toks)
						if sampling.Temperature == 0 {
							if d := cmp.Diff(enginetest.Greedy(p, maxTokens, vocab), want[i]); d != "" {
								t.Fatalf("alone %d differs from the reference (-want +got):\n%s", i, d)
							}
						}
					}

					// All together, submitted one step apart.
					b := enginetest.NewBackend(8, 64, vocab)
					b.StepDelay = time.Millisecond
					e := start(t, b, cfg)
					got := make([][]int, n)
					admitted := make([]time.Time, n)
					var wg sync.WaitGroup
					for i, p := range ps {
						s := submit(t, e, t.Context(), engine.Request{Prompt: p, MaxTokens: maxTokens, Sampling: sampling})
						wg.Go(func() {
							toks, res := drain(s)
							got[i], admitted[i] = ids(toks), res.Admitted
							checkPhases(t, toks, res.Submitted)
						})
						time.Sleep(3 * time.Millisecond)
					}
					wg.Wait()
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("batched outputs differ from alone (-want +got):\n%s", d)
					}
					for i := 1; i < n; i++ {
						if !admitted[i].After(admitted[i-1]) {
							t.Errorf("request %d admitted at %v, not after request %d (%v)", i, admitted[i], i-1, admitted[i-1])
						}
					}
					if err := b.Err(); err != nil {
						t.Errorf("backend contract: %v", err)
					}
					if n > 1 {
						if got := e.Snapshot().BatchMax; got < 2 {
							t.Errorf("BatchMax = %d, requests never shared a step", got)
						}
					}
				})
			})
		}
	}
}

// TestFinish covers the ends of a request: a stop token (emitted, then
// stop), MaxTokens, and the context cap.
func TestFinish(t *testing.T) {
	const vocab, seq = 64, 32
	prompt := []int{1, 2, 3}
	ref := enginetest.Greedy(prompt, 20, vocab)
	tests := []struct {
		name       string
		req        engine.Request
		wantIDs    []int
		wantFinish engine.FinishReason
	}{
		{"stop token", engine.Request{Prompt: prompt, MaxTokens: 20, StopIDs: []int{ref[4]}}, ref[:firstIndex(ref, ref[4])+1], engine.FinishStop},
		{"max tokens", engine.Request{Prompt: prompt, MaxTokens: 5}, ref[:5], engine.FinishLength},
		{"one token", engine.Request{Prompt: prompt, MaxTokens: 1}, ref[:1], engine.FinishLength},
		{"context cap", engine.Request{Prompt: make([]int, seq-4), MaxTokens: 100}, enginetest.Greedy(make([]int, seq-4), 4, vocab), engine.FinishLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := enginetest.NewBackend(2, seq, vocab)
			e := start(t, b, engine.Config{})
			toks, res := drain(submit(t, e, t.Context(), tc.req))
			if d := cmp.Diff(tc.wantIDs, ids(toks)); d != "" {
				t.Errorf("ids (-want +got):\n%s", d)
			}
			want := engine.Result{Finish: tc.wantFinish, PromptTokens: len(tc.req.Prompt), Generated: len(tc.wantIDs)}
			got := engine.Result{Finish: res.Finish, Err: res.Err, PromptTokens: res.PromptTokens, Generated: res.Generated}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if res.Admitted.Before(res.Submitted) || res.PrefillDone.Before(res.Admitted) {
				t.Errorf("instants out of order: submitted %v admitted %v prefill done %v", res.Submitted, res.Admitted, res.PrefillDone)
			}
			checkPhases(t, toks, res.Submitted)
			if err := b.Err(); err != nil {
				t.Errorf("backend contract: %v", err)
			}
			waitReleased(t, e)
		})
	}
}

func firstIndex(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// waitReleased checks that, once a stream ended, its request
// holds no slot or KV reservation. The actor ends the request before it
// closes the stream, but publishes its snapshot at the end of that cycle,
// which may come after the reader saw the stream close: the check waits,
// bounded, for that one publication instead of reading a stale snapshot.
func waitReleased(t *testing.T, e *engine.Engine) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := e.Snapshot()
		if s.Active == 0 && s.KVReserved == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("after the stream ended: %d active, %d KV reserved", s.Active, s.KVReserved)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestKVBudget: a request is admitted only while its reservation fits, so
// two requests that each need more than half the budget run one after the
// other even with free slots.
func TestKVBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(4, 32, 64)
		b.StepDelay = time.Millisecond
		e := start(t, b, engine.Config{KVBudget: 32})
		r := engine.Request{Prompt: []int{1, 2, 3, 4, 5, 6}, MaxTokens: 12} // reserves 18
		s1 := submit(t, e, t.Context(), r)
		s2 := submit(t, e, t.Context(), r)
		toks1, res1 := drain(s1)
		_, res2 := drain(s2)
		if res2.Admitted.Before(toks1[len(toks1)-1].Ready) {
			t.Errorf("second admitted at %v, before the first ended (%v)", res2.Admitted, toks1[len(toks1)-1].Ready)
		}
		if res1.Finish != engine.FinishLength || res2.Finish != engine.FinishLength {
			t.Errorf("finish %q, %q", res1.Finish, res2.Finish)
		}
		if got := e.Snapshot().BatchMax; got != 1 {
			t.Errorf("BatchMax = %d, want 1", got)
		}
	})
}

// TestSubmitErrors: invalid requests, a full queue, a stopped engine.
func TestSubmitErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(1, 16, 64)
		gate := make(chan struct{})
		b.BeforeForward = func([]llama.Row) { <-gate }
		e, err := engine.New(b, engine.Config{QueueDepth: 1, MaxBatch: 1})
		if err != nil {
			t.Fatal(err)
		}
		ok := engine.Request{Prompt: []int{1}, MaxTokens: 1}
		if _, err := e.Submit(t.Context(), ok); !isErr(err, engine.ErrStopped) {
			t.Errorf("before Start: err = %v, want ErrStopped", err)
		}
		if err := e.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			req  engine.Request
			want error
		}{
			{"empty prompt", engine.Request{MaxTokens: 1}, engine.ErrInvalidRequest},
			{"zero max tokens", engine.Request{Prompt: []int{1}}, engine.ErrInvalidRequest},
			{"token outside vocabulary", engine.Request{Prompt: []int{64}, MaxTokens: 1}, engine.ErrInvalidRequest},
			{"negative token", engine.Request{Prompt: []int{-1}, MaxTokens: 1}, engine.ErrInvalidRequest},
			{"prompt fills the context", engine.Request{Prompt: make([]int, 16), MaxTokens: 1}, engine.ErrTooLong},
			{"negative temperature", engine.Request{Prompt: []int{1}, MaxTokens: 1, Sampling: sampling.Params{Temperature: -1}}, engine.ErrInvalidRequest},
			{"top_p above one", engine.Request{Prompt: []int{1}, MaxTokens: 1, Sampling: sampling.Params{TopP: 1.5}}, engine.ErrInvalidRequest},
			{"negative top_k", engine.Request{Prompt: []int{1}, MaxTokens: 1, Sampling: sampling.Params{TopK: -2}}, engine.ErrInvalidRequest},
		}
		for _, tc := range tests {
			if _, err := e.Submit(t.Context(), tc.req); !isErr(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
			}
		}

		// One request in the only slot (the actor held inside its forward
		// pass), one in the queue of depth 1: the next is refused.
		s1 := submit(t, e, t.Context(), ok)
		synctest.Wait()
		s2 := submit(t, e, t.Context(), ok)
		if _, err := e.Submit(t.Context(), ok); !isErr(err, engine.ErrQueueFull) {
			t.Errorf("full queue: err = %v, want ErrQueueFull", err)
		}
		if got := e.Snapshot().QueueDepth; got != 1 {
			t.Errorf("QueueDepth = %d, want 1", got)
		}
		close(gate)
		for i, s := range []*engine.Stream{s1, s2} {
			if _, res := drain(s); res.Finish != engine.FinishLength {
				t.Errorf("request %d: finish %q", i, res.Finish)
			}
		}

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := e.Submit(ctx, ok); !isErr(err, context.Canceled) {
			t.Errorf("cancelled context: err = %v, want context.Canceled", err)
		}
		if err := e.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Submit(t.Context(), ok); !isErr(err, engine.ErrStopped) {
			t.Errorf("after Shutdown: err = %v, want ErrStopped", err)
		}
		if e.Ready() {
			t.Error("Ready after Shutdown")
		}
	})
}
