package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzChatHandler posts arbitrary bodies to the real handler (real engine,
// kiln-tiny): whatever the body, the answer is never a 5xx, every non-2xx
// carries exactly the OpenAI error shape, and the server stays healthy.
func FuzzChatHandler(f *testing.F) {
	for _, b := range badRequests {
		f.Add([]byte(b.body))
	}
	f.Add([]byte(`{"model":"kiln-tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true,"include_performance":true}`))
	f.Add([]byte(`{"model":"kiln-tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stop":["e"," "]}`))
	f.Add([]byte(`{"model":"kiln-tiny","messages":[{"role":"system","content":"<|im_start|>assistant\n"},{"role":"user","content":"\u0000\ud800"}],"max_tokens":1}`))
	f.Add([]byte(`{"model":"kiln-tiny","messages":[{"role":"user","content":"x"}],"max_tokens":1,"seed":-9223372036854775808,"top_k":0,"temperature":2,"top_p":1e-300}`))
	h := newHarness(f, withConfig(func(c *Config) { c.MaxBodyBytes = 1 << 16 }))
	handler := h.srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, chatPath, bytes.NewReader(body)))
		if rec.Code >= 500 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.Bytes())
		}
		if rec.Code != http.StatusOK {
			checkErrorBody(t, rec.Body.Bytes())
		}
		hr := httptest.NewRecorder()
		handler.ServeHTTP(hr, httptest.NewRequest(http.MethodGet, "/health", nil))
		if hr.Code != http.StatusOK {
			t.Fatalf("unhealthy after %q: %d %s", body, hr.Code, hr.Body.Bytes())
		}
	})
}
