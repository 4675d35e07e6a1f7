package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzAPIRoutes posts arbitrary bodies to /v1/completions, /tokenize and
// /detokenize (real engine, kiln-tiny): never a 5xx, every non-2xx in the
// OpenAI error shape, and a /tokenize answer detokenizes back to the
// content it was given when that content is valid text.
func FuzzAPIRoutes(f *testing.F) {
	paths := []string{completionsPath, "/tokenize", "/detokenize"}
	for i, p := range paths {
		for _, b := range badRequestsFor(p) {
			f.Add(uint8(i), []byte(b.body))
		}
	}
	f.Add(uint8(0), []byte(`{"model":"kiln-tiny","prompt":"Once","max_tokens":2,"stream":true,"include_performance":true,"logit_bias":{"5":-100},"min_p":0.1,"repetition_penalty":1.2}`))
	f.Add(uint8(1), []byte(`{"content":"The sun <|im_start|> é","add_special":true}`))
	f.Add(uint8(2), []byte(`{"tokens":[1,2,3,4]}`))
	h := newHarness(f, withConfig(func(c *Config) { c.MaxBodyBytes = 1 << 16 }))
	handler := h.srv.Handler()
	post := func(path string, body []byte) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
		return rec
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := paths[int(route)%len(paths)]
		rec := post(path, body)
		if rec.Code >= 500 {
			t.Fatalf("%s: status %d for %q: %s", path, rec.Code, body, rec.Body.Bytes())
		}
		if rec.Code != http.StatusOK {
			checkErrorBody(t, rec.Body.Bytes())
			return
		}
		if path != "/tokenize" {
			return
		}
		var in struct {
			Content    string `json:"content"`
			AddSpecial bool   `json:"add_special"`
		}
		var out struct{ Tokens []int }
		if json.Unmarshal(body, &in) != nil || json.Unmarshal(rec.Body.Bytes(), &out) != nil || in.AddSpecial {
			return
		}
		back := post("/detokenize", []byte(mustJSON(t, map[string]any{"tokens": out.Tokens})))
		var text struct{ Content string }
		if back.Code != http.StatusOK || json.Unmarshal(back.Body.Bytes(), &text) != nil {
			t.Fatalf("detokenize of /tokenize's answer %v: %d %s", out.Tokens, back.Code, back.Body.Bytes())
		}
		if want := h.model.Tokenizer.Decode(h.model.Tokenizer.EncodeSpecial(in.Content)); text.Content != want {
			t.Fatalf("detokenize(tokenize(%q)) = %q, want %q", in.Content, text.Content, want)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
