package server

import (
	"net/http"
	"testing"

	"github.com/kiln-ai/kiln/server/anthropic"
	"github.com/kiln-ai/kiln/telemetry"
)

// TestWiresShareTheLatencyContract: a request of each API gets the HTTP
// server span named after its route, whose child is the chat span with
// kiln.request.api naming the API and the phase spans below it; each is
// kept in the recent requests, and the chat-shaped ones (chat, Responses,
// Messages) are counted by kiln_requests_total.
func TestWiresShareTheLatencyContract(t *testing.T) {
	h, exp := tracedHarness(t)
	reqs := []struct {
		path, api string
		body      map[string]any
	}{
		{chatPath, telemetry.APIChatCompletions, h.chatBody(nil)},
		{completionsPath, telemetry.APICompletions, map[string]any{"model": h.model.ID, "prompt": "Once", "max_tokens": 3}},
		{responsesPath, telemetry.APIResponses, h.responsesBody(map[string]any{"stream": true})},
		{anthropic.MessagesPath, telemetry.APIMessages, h.messagesBody(map[string]any{"stream": true})},
	}
	before := h.metricValue(t, "kiln_requests_total", map[string]string{"status": "ok"})
	for _, rq := range reqs {
		exp.Reset()
		if status, _, body := h.do(http.MethodPost, rq.path, rq.body, nil); status != http.StatusOK {
			t.Fatalf("%s: %d %s", rq.path, status, body)
		}
		spans := waitSpans(t, exp, "POST "+rq.path)
		server := spanNamed(spans, "POST "+rq.path)[0]
		var chat []string
		for _, s := range spans {
			if s.Parent.SpanID() != server.SpanContext.SpanID() {
				continue
			}
			for _, a := range s.Attributes {
				if string(a.Key) == telemetry.AttrAPI {
					chat = append(chat, a.Value.AsString())
				}
			}
			if len(spanNamed(spans, "kiln.actor_decode")) != 1 || spanNamed(spans, "kiln.actor_decode")[0].Parent.SpanID() != s.SpanContext.SpanID() {
				t.Errorf("%s: the decode span is not the chat span's child", rq.path)
			}
		}
		if len(chat) != 1 || chat[0] != rq.api {
			t.Errorf("%s: the server span's children name the APIs %v, want [%s]", rq.path, chat, rq.api)
		}
	}
	// A legacy completion's span (text_completion {model}) is not a chat
	// request: the request families count the other three.
	if got := h.metricValue(t, "kiln_requests_total", map[string]string{"status": "ok"}); got != before+3 {
		t.Errorf(`kiln_requests_total{status="ok"} moved by %v, want 3`, got-before)
	}
	var recent struct{ Data []map[string]any }
	h.getJSON("/v1/stats/recent-requests", &recent)
	if len(recent.Data) < 4 {
		t.Errorf("%d recent requests, want the 4", len(recent.Data))
	}
}
