package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/sampling"
)

// withEngineOptions passes opts to the harness's engine.
func withEngineOptions(opts ...engine.Option) harnessOption {
	return func(s *harnessSetup) { s.eopts = append(s.eopts, opts...) }
}

// checkHealthy asserts /health is 200 and a normal request completes.
func (h *harness) checkHealthy(t *testing.T, after string) {
	t.Helper()
	if status, _, body := h.do(http.MethodGet, "/health", nil, nil); status != http.StatusOK {
		t.Fatalf("after %s: /health %d %s", after, status, body)
	}
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil); status != http.StatusOK {
		t.Fatalf("after %s: a normal chat got %d %s", after, status, body)
	}
}

// completionText is the message content of a non-streaming response.
func completionText(t *testing.T, body []byte) string {
	t.Helper()
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("response %s: %v", body, err)
	}
	return resp.Choices[0].Message.Content
}

// TestTinyTemperature is the probe's engine killer: temperature 1e-40 is
// a float32 denormal whose reciprocal overflows; with top_p below 1 it
// emptied the nucleus and the actor panicked, leaving every later request
// and /health at 503. It is the greedy limit: the same text as
// temperature 0.
func TestTinyTemperature(t *testing.T) {
	h := newHarness(t)
	_, _, greedy := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
	for _, temp := range []float64{1e-40, 1e-45, 1e-50, 1e-38} {
		status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"temperature": temp, "top_p": 0.5, "top_k": 5}), nil)
		if status != http.StatusOK {
			t.Fatalf("temperature %g: %d %s", temp, status, body)
		}
		if got, want := completionText(t, body), completionText(t, greedy); got != want {
			t.Errorf("temperature %g: %q, want the greedy %q", temp, got, want)
		}
		h.checkHealthy(t, "a tiny temperature")
	}
}

// panicSeed makes the test's sample hook panic for that request only.
const panicSeed = 666

// TestRequestFaultFailsAlone is the kill-switch check over HTTP: a request
// whose sampling panics (a test hook) gets a clean error, a streamed one
// ends with finish_reason "error" and [DONE], and the engine stays healthy
// for the next request.
func TestRequestFaultFailsAlone(t *testing.T) {
	h := newHarness(t, withEngineOptions(engine.WithFaultHooks(engine.FaultHooks{Sample: func(s sampling.Params) {
		if s.HasSeed && s.Seed == panicSeed {
			panic("injected sampler fault")
		}
	}})))
	status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"seed": panicSeed}), nil)
	if status != http.StatusInternalServerError {
		t.Errorf("faulting request: %d %s; want 500", status, body)
	}
	checkErrorBody(t, body)
	h.checkHealthy(t, "a request fault")

	status, _, body = h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"seed": panicSeed, "stream": true}), nil)
	recs := sseRecords(t, body)
	if status != http.StatusOK || len(recs) < 2 || recs[len(recs)-1] != "[DONE]" || !strings.Contains(recs[len(recs)-2], `"finish_reason":"error"`) {
		t.Errorf("faulting stream: %d %q; want finish_reason error then [DONE]", status, recs)
	}
	h.checkHealthy(t, "a streamed request fault")
}
