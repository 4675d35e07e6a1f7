package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// ArmResult is one arm's run: its samples and the server's own snapshots
// from before and after.
type ArmResult struct {
	Name          string          `json:"name"`
	Flag          string          `json:"flag,omitempty"` // the one flag this arm changed
	URL           string          `json:"url"`
	StartedAt     time.Time       `json:"started_at"`
	WallMs        float64         `json:"wall_ms"`
	Samples       []Sample        `json:"samples"`
	Stats         Stats           `json:"stats"`
	Config        json.RawMessage `json:"server_config,omitempty"` // GET /v1/config before the run (a Kiln server's resolved configuration)
	DecodeBefore  json.RawMessage `json:"decode_stats_before,omitempty"`
	DecodeAfter   json.RawMessage `json:"decode_stats_after,omitempty"`
	MetricsBefore string          `json:"metrics_before,omitempty"`
	MetricsAfter  string          `json:"metrics_after,omitempty"`
	SnapshotError []string        `json:"snapshot_errors,omitempty"`
	// Warmup is how many warm-up requests ran before the samples.
	Warmup int `json:"warmup_requests,omitempty"`
	// PrefixCache is the server's prefix cache memory over the run, when
	// watched.
	PrefixCache *PrefixCacheWatch `json:"prefix_cache,omitempty"`
}

// Progress receives one call per finished request.
type Progress interface {
	Update(done, total, failed int)
	Finish()
}

// Run drives the workload against c and returns the arm's evidence. It stops
// at the request count, at the duration, or when ctx ends. With Turns > 1
// each worker runs whole conversations, one turn after the other; a
// conversation whose turn failed sends no further turns, and none starts a
// turn once the duration is over.
func Run(ctx context.Context, c *Client, w *Workload, prog Progress) (*ArmResult, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	n := w.Requests
	if n == 0 {
		n = 1 << 20 // bounded by Duration
	}
	promptCount := n
	if promptCount > 4096 {
		promptCount = 4096
	}
	prompts, err := w.Prompts(promptCount)
	if err != nil {
		return nil, err
	}
	res := &ArmResult{URL: c.BaseURL, StartedAt: time.Now()}
	if b, err := c.get(ctx, "/v1/config"); err != nil {
		res.SnapshotError = append(res.SnapshotError, err.Error())
	} else if json.Valid(b) {
		res.Config = b
	}
	res.DecodeBefore, res.MetricsBefore = snapshot(ctx, c, res)

	runCtx := ctx
	if w.Duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, w.Duration)
		defer cancel()
	}
	start := time.Now()
	var (
		mu      sync.Mutex
		next    int
		samples []Sample
		failed  int
	)
	turns := max(w.Turns, 1)
	total := w.Requests * turns
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || runCtx.Err() != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	record := func(s Sample) {
		mu.Lock()
		defer mu.Unlock()
		samples = append(samples, s)
		if s.Error != "" {
			failed++
		}
		// Progress is drawn under the lock: Update keeps state and
		// writes to one writer, and workers finish concurrently.
		if prog != nil {
			prog.Update(len(samples), total, failed)
		}
	}
	var wg sync.WaitGroup
	for range w.Concurrency {
		wg.Go(func() {
			for {
				conv, ok := take()
				if !ok {
					return
				}
				var replies []string
				for turn := 1; turn <= turns; turn++ {
					if turn > 1 && runCtx.Err() != nil {
						break
					}
					seq := conv*turns + turn - 1
					s := Sample{Seq: seq, Prompt: conv % len(prompts), StartMs: timing.Ms(time.Since(start))}
					msgs := prompts[s.Prompt]
					if w.Turns > 1 {
						s.Conversation, s.Turn = conv, turn
						msgs = Conversation(msgs, turn, replies)
					}
					// A request in flight when the duration ends is allowed to
					// finish: cutting it would record a client-made failure.
					c.Do(ctx, w, msgs, w.Seed+uint64(seq), &s)
					record(s)
					if s.Error != "" {
						break
					}
					replies = append(replies, s.Reply)
				}
			}
		})
	}
	wg.Wait()
	if prog != nil {
		prog.Finish()
	}
	res.WallMs = timing.Ms(time.Since(start))
	sortBySeq(samples)
	res.Samples = samples
	res.DecodeAfter, res.MetricsAfter = snapshot(ctx, c, res)
	res.Stats = Summarize(samples, res.WallMs)
	return res, nil
}

// Warmup sends n short requests, one at a time, before a measured run: a
// user message starting "warm up" (a word the workload's vocabulary lacks)
// and at most 8 tokens, so the server has touched its weights and scratch
// and a prefix cache holds nothing of the workload beyond the chat
// template's first tokens. It returns the first failure.
func Warmup(ctx context.Context, c *Client, w *Workload, n int) error {
	ww := Workload{Model: w.Model, Concurrency: 1, Requests: n, MaxTokens: min(w.MaxTokens, 8), PromptTokens: 16,
		Stream: w.Stream, Temperature: w.Temperature, Seed: w.Seed ^ 0x7761726d}
	prompts, err := ww.Prompts(n)
	if err != nil {
		return err
	}
	for i, p := range prompts {
		p[0].Content = "warm up " + p[0].Content
		var s Sample
		c.Do(ctx, &ww, p, ww.Seed+uint64(i), &s)
		if s.Error != "" {
			return fmt.Errorf("warm-up request %d: %s", i+1, s.Error)
		}
	}
	return nil
}

// snapshot reads the server's /v1/stats/decode and /metrics when it has
// them (a non-Kiln server may not: that is recorded, not fatal).
func snapshot(ctx context.Context, c *Client, res *ArmResult) (json.RawMessage, string) {
	var decode json.RawMessage
	b, err := c.get(ctx, "/v1/stats/decode")
	switch {
	case err != nil:
		res.SnapshotError = append(res.SnapshotError, err.Error())
	case json.Valid(b):
		decode = b
	default:
		res.SnapshotError = append(res.SnapshotError, "/v1/stats/decode: not JSON")
	}
	m, err := c.get(ctx, "/metrics")
	if err != nil {
		res.SnapshotError = append(res.SnapshotError, err.Error())
	}
	return decode, string(m)
}
