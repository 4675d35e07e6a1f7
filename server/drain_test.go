package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestDrainCutsCleanly: during the drain the listener stays open and new
// requests get 503 with Retry-After, /health says draining; at the grace
// deadline a stream still running ends with an OpenAI error event and
// [DONE] (not a bare EOF), a non-streaming request gets a 503 body, and
// Shutdown reports ErrDrainCut.
func TestDrainCutsCleanly(t *testing.T) {
	h := newHarness(t)
	srv := h.loopbackServer(t)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr().String()
	// The actor stops in its first forward step until the grace ends.
	h.backend.setBefore(func([]llamaRow) { <-srv.cut })

	type result struct {
		status int
		body   []byte
		err    error
	}
	post := func(body map[string]any) <-chan result {
		out := make(chan result, 1)
		b, _ := json.Marshal(body)
		go func() {
			resp, err := http.Post(url+chatPath, "application/json", bytes.NewReader(b))
			if err != nil {
				out <- result{err: err}
				return
			}
			defer resp.Body.Close()
			rb, err := io.ReadAll(resp.Body)
			out <- result{resp.StatusCode, rb, err}
		}()
		return out
	}
	stream := post(h.chatBody(map[string]any{"stream": true, "max_tokens": 50}))
	whole := post(h.chatBody(map[string]any{"max_tokens": 50}))
	waitFor(t, "both requests to be admitted", func() bool { return len(srv.streams) == 2 })

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	waitFor(t, "the drain to begin", srv.stopping.Load)

	resp, err := http.Post(url+chatPath, "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatalf("new request during the drain: %v (the listener must stay open)", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("new chat during the drain: %d Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	checkErrorBody(t, body)
	resp, err = http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var hb healthBody
	_ = json.NewDecoder(resp.Body).Decode(&hb)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || hb.Status != "draining" {
		t.Errorf("/health during the drain: %d %q, want 503 draining", resp.StatusCode, hb.Status)
	}

	if err := <-shut; !errors.Is(err, ErrDrainCut) {
		t.Errorf("Shutdown: %v, want ErrDrainCut", err)
	}
	s := <-stream
	if s.err != nil || s.status != http.StatusOK {
		t.Fatalf("stream: %d %v", s.status, s.err)
	}
	recs := sseRecords(t, s.body)
	if n := len(recs); n < 2 || recs[n-1] != "[DONE]" {
		t.Fatalf("cut stream does not end with [DONE]: %q", recs)
	}
	checkErrorBody(t, []byte(recs[len(recs)-2]))
	w := <-whole
	if w.err != nil || w.status != http.StatusServiceUnavailable {
		t.Fatalf("non-streaming request at the cut: %d %v %s", w.status, w.err, w.body)
	}
	checkErrorBody(t, w.body)
}

// TestHealthRuntime: /health reports the goroutines and open descriptors.
func TestHealthRuntime(t *testing.T) {
	h := newHarness(t)
	var hb healthBody
	h.getJSON("/health", &hb)
	if hb.Runtime.Goroutines < 2 || hb.Runtime.OpenFDs < 3 {
		t.Errorf("runtime block %+v: want the live goroutines and descriptors", hb.Runtime)
	}
}
