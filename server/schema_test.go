package server

import (
	"net/http"
	"testing"

	"github.com/kiln-ai/kiln/schemas"
)

// TestResponsesMatchSchemas validates real responses captured from a
// running server against the published JSON Schemas.
func TestResponsesMatchSchemas(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, id, def string, body []byte) {
		t.Helper()
		if err := v.Validate(id, def, body); err != nil {
			t.Errorf("%s does not match %s: %v\n%s", def, id, err, body)
		}
	}
	h := newHarness(t, withConfig(func(c *Config) { c.RecentRequestText = true }))

	t.Run("stream with performance and usage", func(t *testing.T) {
		_, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{
			"stream": true, "include_performance": true, "stream_options": map[string]any{"include_usage": true},
		}), nil)
		p := parseStream(t, body)
		for i, raw := range p.raw {
			def := "stream_chunk"
			if p.order[i] == "timing" {
				def = "token_timing_event"
			}
			check(t, schemas.InferenceID, def, raw)
		}
	})
	t.Run("pure stream", func(t *testing.T) {
		_, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"stream": true}), nil)
		for _, raw := range parseStream(t, body).raw {
			check(t, schemas.InferenceID, "stream_chunk", raw)
		}
	})
	for _, perf := range []bool{false, true} {
		t.Run("non-stream", func(t *testing.T) {
			_, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"include_performance": perf}), nil)
			check(t, schemas.InferenceID, "chat_completion", body)
		})
	}
	t.Run("observability endpoints", func(t *testing.T) {
		check(t, schemas.ObservabilityID, "decode_stats", h.getJSON("/v1/stats/decode", nil))
		check(t, schemas.ObservabilityID, "recent_requests", h.getJSON("/v1/stats/recent-requests", nil))
		check(t, schemas.ObservabilityID, "health", h.getJSON("/health", nil))
		_, _, body := h.do(http.MethodGet, "/v1/debug/model-state", nil, nil)
		check(t, schemas.ObservabilityID, "debug_disabled", body)
		_, _, body = h.do(http.MethodPost, chatPath, `{"model":1}`, nil)
		check(t, schemas.ObservabilityID, "error", body)
	})
}
