package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestOversizedPromptRefusedBeforeTokenizing: a prompt whose bytes
// cannot fit the context is refused (400 context_length_exceeded) from
// its size alone: the request costs about its body, not the several
// times more that rendering and tokenizing it would.
func TestOversizedPromptRefusedBeforeTokenizing(t *testing.T) {
	h := newHarness(t)
	words := strings.Repeat("the sun is a star ", 3<<20/18) // 3 MB, far over the bound
	for _, tc := range []struct {
		name, path string
		body       map[string]any
	}{
		{"chat", chatPath, h.chatBody(map[string]any{"messages": []map[string]any{{"role": "user", "content": words}}})},
		{"legacy completion", completionsPath, map[string]any{"model": h.model.ID, "prompt": words}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(tc.body)
			if int64(len(b)) > h.cfg.MaxBodyBytes {
				t.Fatalf("test body of %d bytes over the body limit", len(b))
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(string(b)))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			h.srv.Handler().ServeHTTP(rec, req)
			runtime.ReadMemStats(&after)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "context_length_exceeded") {
				t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
			// Body, its parsed copy, the decoded content: about 4x the body.
			// Tokenizing alone would add over 8 bytes per token.
			if got := after.TotalAlloc - before.TotalAlloc; got > 6*uint64(len(b)) {
				t.Errorf("refusing a %d-byte prompt allocated %d bytes: it was rendered or tokenized", len(b), got)
			}
		})
	}
	// A prompt that fits still passes the check.
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil); status != http.StatusOK {
		t.Errorf("small prompt: %d %s", status, body)
	}
}
