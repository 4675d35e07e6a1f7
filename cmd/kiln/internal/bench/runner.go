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
	prompts, err := w.Prompts(min(n, 4096))
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
	r := &run{c: c, w: w, prompts: prompts, prog: prog, n: n, turns: max(w.Turns, 1), start: time.Now()}
	var wg sync.WaitGroup
	for range w.Concurrency {
		wg.Go(func() {
			for conv, ok := r.take(runCtx); ok; conv, ok = r.take(runCtx) {
				r.converse(ctx, runCtx, conv)
			}
		})
	}
	wg.Wait()
	if prog != nil {
		prog.Finish()
	}
	res.WallMs = timing.Ms(time.Since(r.start))
	sortBySeq(r.samples)
	res.Samples = r.samples
	res.DecodeAfter, res.MetricsAfter = snapshot(ctx, c, res)
	res.Stats = Summarize(r.samples, res.WallMs)
	return res, nil
}

// run is one Run's workers' shared state: the next conversation to start
// and the samples so far, under mu.
type run struct {
	c       *Client
	w       *Workload
	prompts [][]Message
	prog    Progress
	n       int // conversations to start at most
	turns   int
	start   time.Time

	mu      sync.Mutex
	next    int
	samples []Sample
	failed  int
}

// take returns the next conversation to start; false when there are no
// more or runCtx, which ends with the duration, is done.
func (r *run) take(runCtx context.Context) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next >= r.n || runCtx.Err() != nil {
		return 0, false
	}
	r.next++
	return r.next - 1, true
}

// record keeps a sample and draws the progress.
func (r *run) record(s Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, s)
	if s.Error != "" {
		r.failed++
	}
	// Progress is drawn under the lock: Update keeps state and writes to
	// one writer, and workers finish concurrently.
	if r.prog != nil {
		r.prog.Update(len(r.samples), r.w.Requests*r.turns, r.failed)
	}
}

// converse sends conversation conv's turns, each resending the history
// with the replies so far, until one fails or runCtx (the duration) ends.
// Requests use ctx, the caller's: a request in flight when the duration
// ends is allowed to finish, as cutting it would record a client-made
// failure.
func (r *run) converse(ctx, runCtx context.Context, conv int) {
	var replies []string
	for turn := 1; turn <= r.turns; turn++ {
		if turn > 1 && runCtx.Err() != nil {
			return
		}
		seq := conv*r.turns + turn - 1
		s := Sample{Seq: seq, Prompt: conv % len(r.prompts), StartMs: timing.Ms(time.Since(r.start))}
		msgs := r.prompts[s.Prompt]
		if r.w.Turns > 1 {
			s.Conversation, s.Turn = conv, turn
			msgs = Conversation(msgs, turn, replies)
		}
		r.c.Do(ctx, r.w, msgs, r.w.Seed+uint64(seq), &s)
		r.record(s)
		if s.Error != "" {
			return
		}
		replies = append(replies, s.Reply)
	}
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
