package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	DecodeBefore  json.RawMessage `json:"decode_stats_before,omitempty"`
	DecodeAfter   json.RawMessage `json:"decode_stats_after,omitempty"`
	MetricsBefore string          `json:"metrics_before,omitempty"`
	MetricsAfter  string          `json:"metrics_after,omitempty"`
	SnapshotError []string        `json:"snapshot_errors,omitempty"`
}

// Progress receives one call per finished request.
type Progress interface {
	Update(done, total, failed int)
	Finish()
}

// Run drives the workload against c and returns the arm's evidence. It stops
// at the request count, at the duration, or when ctx ends.
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
	total := w.Requests
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || runCtx.Err() != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	var wg sync.WaitGroup
	for range w.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seq, ok := take()
				if !ok {
					return
				}
				s := Sample{Seq: seq, Prompt: seq % len(prompts), StartMs: timing.Ms(time.Since(start))}
				// A request in flight when the duration ends is allowed to
				// finish: cutting it would record a client-made failure.
				c.Do(ctx, w, prompts[s.Prompt], w.Seed+uint64(seq), &s)
				mu.Lock()
				samples = append(samples, s)
				if s.Error != "" {
					failed++
				}
				// Progress is drawn under the lock: Update keeps state and
				// writes to one writer, and workers finish concurrently.
				if prog != nil {
					prog.Update(len(samples), total, failed)
				}
				mu.Unlock()
			}
		}()
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

// snapshot reads the server's /v1/stats/decode and /metrics when it has
// them (a non-Kiln server may not: that is recorded, not fatal).
func snapshot(ctx context.Context, c *Client, res *ArmResult) (json.RawMessage, string) {
	get := func(path string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.BaseURL, "/")+path, nil)
		if err != nil {
			return nil, err
		}
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
		}
		return b, nil
	}
	var decode json.RawMessage
	b, err := get("/v1/stats/decode")
	switch {
	case err != nil:
		res.SnapshotError = append(res.SnapshotError, err.Error())
	case json.Valid(b):
		decode = b
	default:
		res.SnapshotError = append(res.SnapshotError, "/v1/stats/decode: not JSON")
	}
	m, err := get("/metrics")
	if err != nil {
		res.SnapshotError = append(res.SnapshotError, err.Error())
	}
	return decode, string(m)
}
