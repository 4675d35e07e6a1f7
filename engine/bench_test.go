package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// runStreams submits n requests of the given shape at once and waits for
// all of them; it returns the tokens generated.
func runStreams(b *testing.B, e *engine.Engine, n, promptLen, genLen int) int {
	var wg sync.WaitGroup
	total := make([]int, n)
	for i := range n {
		prompt := make([]int, promptLen)
		for j := range prompt {
			prompt[j] = 1 + (i*13+j*7)%60
		}
		s, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, MaxTokens: genLen})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for range s.Tokens() {
				total[i]++
			}
		})
	}
	wg.Wait()
	sum := 0
	for _, t := range total {
		sum += t
	}
	return sum
}

// BenchmarkEngineThroughput: aggregate tokens per second through the engine
// at 1, 4 and 16 concurrent streams on a stories15M-shaped model (kiln-tiny's
// shape, random weights). Each iteration runs every stream to 64 tokens
// from an 8-token prompt; tok/s counts generated tokens over the wall time
// of the iteration, prefill included.
func BenchmarkEngineThroughput(b *testing.B) {
	cfg := llama.TinyConfig()
	cfg.SeqLen = 256
	m, err := llama.NewRandom(cfg, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	pool := kernels.NewPool(0)
	defer pool.Close()
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			e, err := engine.New(m.NewState(16, pool), engine.Config{})
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = e.Shutdown(context.Background()) }()
			runStreams(b, e, n, 8, 4) // warm the KV caches and scratch
			b.ReportAllocs()
			tokens := 0
			start := time.Now()
			for b.Loop() {
				tokens += runStreams(b, e, n, 8, 64)
			}
			b.ReportMetric(float64(tokens)/time.Since(start).Seconds(), "tok/s")
		})
	}
}

// BenchmarkActorOverhead: the actor's own cost per token (admission,
// bookkeeping, sampling of a 64-id vocabulary, delivery) over a fake
// backend that computes almost nothing; allocations are per iteration of 8
// streams x 64 tokens, so per-token steady-state allocation shows as a
// count far above the per-request ones.
func BenchmarkActorOverhead(b *testing.B) {
	fake := enginetest.NewBackend(8, 128, 64)
	fake.Quiet = true
	e, err := engine.New(fake, engine.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = e.Shutdown(context.Background()) }()
	b.ReportAllocs()
	tokens := 0
	for b.Loop() {
		tokens += runStreams(b, e, 8, 4, 64)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tokens), "ns/token")
}
