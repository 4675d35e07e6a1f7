package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSoak runs a mixed workload against the built binary for KILN_SOAK
// (a duration: scripts/test sets 2m; longer by hand, e.g. KILN_SOAK=10m):
// streams, non-streaming requests, clients that disconnect mid-stream,
// and bad requests of several kinds, from concurrent workers. It asserts
// no 5xx at all, a resident memory that does not keep growing, and open
// descriptors and goroutines back to their baseline once the load stops.
// Without KILN_SOAK it skips: it is a time budget, not a unit test.
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("KILN_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("set KILN_SOAK to a duration (e.g. KILN_SOAK=2m) to run the soak")
	}
	p := startKiln(t, "--max-body-bytes", "65536", "--evict-grace", "1s", "--body-timeout", "2s")
	base := soakHealth(t, p)
	baseRSS := rssKB(t, p)

	var fivexx, done atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				status := soakOne(p, (w+i)%6)
				mu.Lock()
				statuses[status]++
				mu.Unlock()
				if status >= 500 {
					fivexx.Add(1)
				}
				done.Add(1)
			}
		}()
	}
	var peak int
	samples := []int{}
	for ctx.Err() == nil {
		time.Sleep(time.Second)
		r := rssKB(t, p)
		samples = append(samples, r)
		peak = max(peak, r)
	}
	wg.Wait()
	t.Logf("%d requests in %v, statuses %v; RSS %d kB at start, peak %d kB", done.Load(), d, statuses, baseRSS, peak)
	if fivexx.Load() > 0 {
		t.Errorf("%d responses were 5xx", fivexx.Load())
	}
	// Bounded memory: the last third of the run does not rise above the
	// first third's peak by more than a margin (a leak keeps growing).
	third := max(len(samples)/3, 1)
	first, last := maxOf(samples[:third]), maxOf(samples[len(samples)-third:])
	if last > first*3/2+64<<10 {
		t.Errorf("RSS kept growing: first third's peak %d kB, last third's %d kB", first, last)
	}
	// Descriptors and goroutines back to the baseline once idle.
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := soakHealth(t, p)
		if now.Runtime.OpenFDs <= base.Runtime.OpenFDs+2 && now.Runtime.Goroutines <= base.Runtime.Goroutines+5 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("not back to baseline: fds %d -> %d, goroutines %d -> %d",
				base.Runtime.OpenFDs, now.Runtime.OpenFDs, base.Runtime.Goroutines, now.Runtime.Goroutines)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

type soakHealthBody struct {
	Runtime struct {
		Goroutines int `json:"goroutines"`
		OpenFDs    int `json:"open_fds"`
	} `json:"runtime"`
}

func soakHealth(t *testing.T, p *kilnProc) soakHealthBody {
	t.Helper()
	resp, err := http.Get(p.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var hb soakHealthBody
	if err := json.NewDecoder(resp.Body).Decode(&hb); err != nil {
		t.Fatal(err)
	}
	return hb
}

// rssKB is the child's resident memory from /proc.
func rssKB(t *testing.T, p *kilnProc) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// soakOne sends one request of the given kind and returns its status
// (0 when the client itself hung up).
func soakOne(p *kilnProc, kind int) int {
	msg := []map[string]any{{"role": "user", "content": "tell me about the sea"}}
	body := map[string]any{"model": "kiln-tiny", "messages": msg, "max_tokens": 24}
	var raw []byte
	path := "/v1/chat/completions"
	switch kind {
	case 1:
		body["stream"] = true
		body["include_performance"] = true
	case 2: // disconnect mid-stream
		body["stream"] = true
		body["max_tokens"] = 200
	case 3:
		raw = []byte(`{"model":"kiln-tiny","messages":[{"role":"user","content":"\xff"}]}`)
	case 4:
		body["model"] = "nope"
		body["temperature"] = 5
	case 5:
		path = "/v1/nowhere"
	}
	if raw == nil {
		raw, _ = json.Marshal(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+path, bytes.NewReader(raw))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if kind == 2 {
		buf := make([]byte, 512)
		_, _ = resp.Body.Read(buf)
		cancel() // the client goes away mid-stream
		return resp.StatusCode
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
