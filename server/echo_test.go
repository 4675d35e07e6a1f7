package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kiln-ai/kiln/server/wire"
)

// TestErrorsEchoBoundedInput: an error body repeats at most a bounded
// prefix of what the client sent (a 1 MB path must not make a 1 MB 404).
func TestErrorsEchoBoundedInput(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("é", 1<<19) // 1 MiB, multi-byte: the cut must keep UTF-8 whole
	chat := func(extra map[string]any) *http.Request {
		b, _ := json.Marshal(h.chatBody(extra))
		return httptest.NewRequest(http.MethodPost, chatPath, strings.NewReader(string(b)))
	}
	parts := []map[string]any{{"type": long, "text": "x"}}
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"long path", httptest.NewRequest(http.MethodGet, "/"+strings.Repeat("a", 1<<20), nil), 404},
		{"long path, wrong method", httptest.NewRequest(http.MethodDelete, "/v1/models?"+long, nil), 405},
		{"long model in path", httptest.NewRequest(http.MethodGet, "/v1/models/"+strings.Repeat("m", 1<<20), nil), 404},
		{"long model in body", chat(map[string]any{"model": long}), 404},
		{"long content part type", chat(map[string]any{"messages": []map[string]any{{"role": "user", "content": parts}}}), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.srv.Handler().ServeHTTP(rec, tt.req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d", rec.Code, tt.want)
			}
			body := rec.Body.String()
			checkErrorBody(t, []byte(body))
			if len(body) > 2*wire.MaxEcho+512 || !utf8.ValidString(body) {
				t.Errorf("error body of %d bytes (valid UTF-8 %v): %.300s", len(body), utf8.ValidString(body), body)
			}
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{strings.Repeat("a", wire.MaxEcho), strings.Repeat("a", wire.MaxEcho)},
		{strings.Repeat("a", wire.MaxEcho+1), strings.Repeat("a", wire.MaxEcho) + "…"},
		{"a" + strings.Repeat("é", wire.MaxEcho), "a" + strings.Repeat("é", (wire.MaxEcho-1)/2) + "…"},
	}
	for _, tt := range tests {
		if got := wire.Clip(tt.in); got != tt.want {
			t.Errorf("Clip(%d bytes) = %q, want %q", len(tt.in), got, tt.want)
		}
	}
}
