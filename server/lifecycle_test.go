package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestStartShutdown: Shutdown stops admitting and lets an in-flight stream
// finish; it is idempotent and safe without Start.
func TestStartShutdown(t *testing.T) {
	h := newHarness(t)
	srv := h.loopbackServer(t)
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown without Start: %v", err)
	}
	if err := srv.Start(context.Background()); !errors.Is(err, errStopping) {
		t.Fatalf("Start after Shutdown: %v, want errStopping", err)
	}

	srv = h.loopbackServer(t)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr().String()

	// Hold the stream inside a decode step until Shutdown has begun.
	entered, gate := h.holdDecode(1)
	b, _ := json.Marshal(h.chatBody(map[string]any{"stream": true, "max_tokens": 10}))
	type result struct {
		body []byte
		err  error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.Post(url+chatPath, "application/json", bytes.NewReader(b))
		if err != nil {
			res <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		res <- result{body, err}
	}()
	<-entered
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	waitFor(t, "the server to stop admitting", srv.stopping.Load)
	// Admission has stopped: a new request (here straight on the
	// handler, the listener being closed) gets 503 with Retry-After.
	nb, _ := json.Marshal(h.chatBody(nil))
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, chatPath, bytes.NewReader(nb)))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("new request while stopping: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	close(gate)
	r := <-res
	if r.err != nil {
		t.Fatalf("in-flight stream: %v", r.err)
	}
	p := parseStream(t, r.body)
	if got := p.terminal["choices"].([]any)[0].(map[string]any)["finish_reason"]; got != "length" {
		t.Errorf("in-flight stream finished with %v, want length", got)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}
