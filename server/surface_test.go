package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMalformedRequestsOverHTTP: every kind of client mistake gets its 4xx
// and an OpenAI-shaped body, and the server stays healthy and serving.
func TestMalformedRequestsOverHTTP(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.MaxBodyBytes = 64 << 10 }))
	type tc struct {
		name, method, path string
		body               string
		status             int
		code               string
	}
	var cases []tc
	for _, path := range []string{chatPath, completionsPath, "/tokenize", "/detokenize"} {
		for _, b := range badRequestsFor(path) {
			body := strings.ReplaceAll(b.body, `"model":"m"`, `"model":"`+h.model.ID+`"`)
			cases = append(cases, tc{path + " " + b.name, http.MethodPost, path, body, b.status, b.code})
		}
	}
	user := `{"role":"user","content":"x"}`
	cases = append(cases,
		tc{"unknown model", http.MethodPost, chatPath, `{"model":"gpt-9","messages":[` + user + `]}`, 404, "model_not_found"},
		tc{"body over the limit", http.MethodPost, chatPath, `{"model":"` + h.model.ID + `","messages":[{"role":"user","content":"` + strings.Repeat("a", 70<<10) + `"}]}`, 413, "request_too_large"},
		tc{"prompt over the context", http.MethodPost, chatPath, `{"model":"` + h.model.ID + `","messages":[{"role":"user","content":"` + strings.Repeat("sun moon star ", 3000) + `"}]}`, 400, "context_length_exceeded"},
		tc{"legacy prompt over the context", http.MethodPost, completionsPath, `{"model":"` + h.model.ID + `","prompt":"` + strings.Repeat("sun moon star ", 3000) + `"}`, 400, "context_length_exceeded"},
		tc{"legacy unknown model", http.MethodPost, completionsPath, `{"model":"gpt-9","prompt":"x"}`, 404, "model_not_found"},
		tc{"logit_bias outside the vocabulary", http.MethodPost, chatPath, `{"model":"` + h.model.ID + `","messages":[` + user + `],"logit_bias":{"99999999":1}}`, 400, "invalid_value"},
		tc{"GET on completions", http.MethodGet, completionsPath, ``, 405, "method_not_allowed"},
		tc{"GET on tokenize", http.MethodGet, "/tokenize", ``, 405, "method_not_allowed"},
		tc{"GET on chat", http.MethodGet, chatPath, ``, 405, "method_not_allowed"},
		tc{"POST on models", http.MethodPost, "/v1/models", `{}`, 405, "method_not_allowed"},
		tc{"unknown path", http.MethodGet, "/v1/nothing", ``, 404, "not_found"},
		tc{"unknown model by id", http.MethodGet, "/v1/models/nope", ``, 404, "model_not_found"},
	)
	if len(cases) < 20 {
		t.Fatalf("only %d kinds of malformed request", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, body := h.do(c.method, c.path, c.body, map[string]string{"Content-Type": "application/json"})
			if status != c.status {
				t.Errorf("status %d, want %d: %s", status, c.status, body)
			}
			checkErrorBody(t, body)
			var e struct{ Error struct{ Code *string } }
			_ = json.Unmarshal(body, &e)
			if e.Error.Code == nil || *e.Error.Code != c.code {
				t.Errorf("code %v, want %q: %s", e.Error.Code, c.code, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	// Still healthy and serving.
	if status, _, body := h.do(http.MethodGet, "/health", nil, nil); status != 200 {
		t.Fatalf("health after malformed requests: %d %s", status, body)
	}
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil); status != 200 {
		t.Fatalf("chat after malformed requests: %d %s", status, body)
	}
	var health healthBody
	h.getJSON("/health", &health)
	if health.Requests.Rejected == 0 {
		t.Errorf("rejected count %d after malformed chats", health.Requests.Rejected)
	}
}

// TestOverloadAnd503: the server's stream limit answers 429 with
// Retry-After; after StopAdmitting, 503 with Retry-After.
func TestOverloadAnd503(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.MaxStreams = 1 }))
	// Hold the only stream slot with a request whose backend step blocks.
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	h.backend.setBefore(func(_ []llamaRow) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-gate
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
	}()
	<-entered
	status, hdr, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Errorf("second request: %d Retry-After %q: %s", status, hdr.Get("Retry-After"), body)
	}
	checkErrorBody(t, body)
	h.backend.setBefore(nil)
	close(gate)
	<-done

	h.srv.StopAdmitting()
	status, hdr, body = h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Errorf("while stopping: %d Retry-After %q: %s", status, hdr.Get("Retry-After"), body)
	}
	checkErrorBody(t, body)
	if status, _, _ := h.do(http.MethodGet, "/health", nil, nil); status != http.StatusServiceUnavailable {
		t.Errorf("health while stopping: %d, want 503", status)
	}
}

// TestClientDisconnect: a client that goes away mid-stream frees its
// engine slot at once and is counted as client_disconnect.
func TestClientDisconnect(t *testing.T) {
	h := newHarness(t)
	// Hold the actor after the first token so the request cannot finish
	// on its own before the client leaves.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, _ := json.Marshal(h.chatBody(map[string]any{"stream": true, "max_tokens": 200}))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.ts.URL+chatPath, bytes.NewReader(b))
	gate := make(chan struct{})
	var once bool
	h.backend.setBefore(func(rows []llamaRow) {
		if !once && len(rows) == 1 && rows[0].Pos > 0 {
			// A decode step after the first token: wait for the client to leave.
			once = true
			<-gate
		}
	})
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	if _, err := rd.ReadString('\n'); err != nil { // the first content chunk
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	close(gate)
	// The handler records the request when it ends; wait for that record.
	var recent struct{ Data []map[string]any }
	waitFor(t, "the request's record", func() bool {
		h.getJSON("/v1/stats/recent-requests", &recent)
		return len(recent.Data) > 0
	})
	if len(recent.Data) != 1 {
		t.Fatalf("recent requests: %v", recent.Data)
	}
	if got := recent.Data[0]["finish_reason"]; got != "client_disconnect" {
		t.Errorf("finish_reason %v, want client_disconnect", got)
	}
	snap := h.eng.Snapshot()
	if snap.Active != 0 || snap.Cancellations != 1 {
		t.Errorf("engine after disconnect: active %d cancellations %d, want 0 and 1", snap.Active, snap.Cancellations)
	}
	var health healthBody
	h.getJSON("/health", &health)
	if health.Requests.ClientDisconnect != 1 {
		t.Errorf("client_disconnect count %d", health.Requests.ClientDisconnect)
	}
}

// TestAuth: with a token, everything but /health and the dashboard's
// static files needs it.
func TestAuth(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.AccessToken = "s3cret" }))
	tests := []struct {
		name, path, auth string
		want             int
	}{
		{"health open", "/health", "", 200},
		{"dashboard page open", "/ui", "", 200},
		{"dashboard asset open", "/ui/dashboard.js", "", 200},
		{"decode stats protected", "/v1/stats/decode", "", 401},
		{"recent requests protected", "/v1/stats/recent-requests", "", 401},
		{"recent request detail protected", "/v1/stats/recent-requests/chatcmpl-x", "", 401},
		{"dashboard diagnosis module open", "/ui/diagnosis.js", "", 200},
		{"v1 health protected", "/v1/health", "", 401},
		{"models no token", "/v1/models", "", 401},
		{"metrics no token", "/metrics", "", 401},
		{"wrong token", "/v1/models", "Bearer nope", 401},
		{"wrong scheme", "/v1/models", "Basic s3cret", 401},
		{"right token", "/v1/models", "Bearer s3cret", 200},
		{"scheme case", "/v1/config", "bearer s3cret", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.auth != "" {
				hdr["Authorization"] = tt.auth
			}
			status, _, body := h.do(http.MethodGet, tt.path, nil, hdr)
			if status != tt.want {
				t.Errorf("status %d, want %d: %s", status, tt.want, body)
			}
			if status == 401 {
				checkErrorBody(t, body)
			}
		})
	}
	status, _, body := h.do(http.MethodGet, "/v1/config", nil, map[string]string{"Authorization": "Bearer s3cret"})
	if status != 200 || strings.Contains(string(body), "s3cret") || !strings.Contains(string(body), `"access_token":"set"`) {
		t.Errorf("config %d: %s", status, body)
	}
}

// TestDebugState: 403 with instructions unless enabled; then state without
// prompt text.
func TestDebugState(t *testing.T) {
	off := newHarness(t)
	status, _, body := off.do(http.MethodGet, "/v1/debug/model-state", nil, nil)
	if status != http.StatusForbidden || !bytes.Contains(body, []byte("--debug-state")) || !bytes.Contains(body, []byte("KILN_DEBUG_STATE=1")) {
		t.Errorf("disabled: %d %s", status, body)
	}
	checkErrorBody(t, body)

	on := newHarness(t, withConfig(func(c *Config) { c.DebugState = true; c.RecentRequestText = true }))
	const secret = "zebra-secret-prompt"
	on.do(http.MethodPost, chatPath, on.chatBody(map[string]any{"messages": []map[string]any{{"role": "user", "content": secret}}}), nil)
	var state map[string]any
	body = on.getJSON("/v1/debug/model-state", &state)
	if bytes.Contains(body, []byte(secret)) {
		t.Errorf("debug state leaks prompt text: %s", body)
	}
	for _, k := range []string{"model", "config", "engine"} {
		if state[k] == nil {
			t.Errorf("debug state lacks %q: %s", k, body)
		}
	}
	// Text capture on: the recent record has the prompt.
	recent := on.getJSON("/v1/stats/recent-requests", nil)
	if !bytes.Contains(recent, []byte(secret)) {
		t.Errorf("recent requests with text capture lack the prompt: %s", recent)
	}
}

// TestRecentRequestsRing: bounded, newest first, no text by default.
func TestRecentRequestsRing(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.RecentRequests = 2 }))
	var ids []string
	for i := range 3 {
		_, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"max_tokens": i + 1}), nil)
		var r struct{ ID string }
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	var recent struct {
		Data []struct {
			ID         string  `json:"id"`
			Prompt     *string `json:"prompt"`
			Completion *string `json:"completion"`
			Tokens     int     `json:"completion_tokens"`
		}
	}
	h.getJSON("/v1/stats/recent-requests", &recent)
	var got []string
	for _, d := range recent.Data {
		got = append(got, d.ID)
		if d.Prompt != nil || d.Completion != nil {
			t.Errorf("text recorded without --recent-request-text: %v %v", *d.Prompt, d.Completion)
		}
	}
	if diff := cmp.Diff([]string{ids[2], ids[1]}, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}

// TestModels: the served model is listed.
func TestModels(t *testing.T) {
	h := newHarness(t)
	var list struct {
		Object string
		Data   []struct{ ID, Object string }
	}
	h.getJSON("/v1/models", &list)
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != h.model.ID || list.Data[0].Object != "model" {
		t.Errorf("models: %+v", list)
	}
	h.getJSON("/v1/models/"+h.model.ID, nil)
	status, hdr, body := h.do(http.MethodGet, "/ui", nil, nil)
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !bytes.Contains(body, []byte("<html")) {
		t.Errorf("/ui: %d %q", status, hdr.Get("Content-Type"))
	}
}

// TestPanicRecovered: a handler panic becomes a 500 OpenAI error and the
// server keeps serving.
func TestPanicRecovered(t *testing.T) {
	h := newHarness(t)
	ts := h.srv.handle(func(http.ResponseWriter, *http.Request) error { panic("boom") })
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	if rec.Code != 500 {
		t.Errorf("status %d", rec.Code)
	}
	checkErrorBody(t, rec.Body.Bytes())
	if bytes.Contains(rec.Body.Bytes(), []byte("boom")) {
		t.Errorf("panic value leaked: %s", rec.Body.Bytes())
	}
}

// TestEngineQueueFull: when the engine's admission queue is full the
// client gets 429 with Retry-After, and the queued request still completes.
func TestEngineQueueFull(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) {
		c.MaxStreams = 0
		c.Engine.MaxBatch, c.Engine.QueueDepth = 1, 1
	}))
	entered, gate := make(chan struct{}), make(chan struct{})
	var once bool
	h.backend.setBefore(func([]llamaRow) {
		if !once {
			once = true
			close(entered)
			<-gate
		}
	})
	results := make(chan int, 2)
	post := func() {
		status, _, _ := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
		results <- status
	}
	go post() // admitted, held inside its first step
	<-entered
	go post() // waits in the queue
	waitFor(t, "the second request to queue", func() bool { return h.eng.Snapshot().QueueDepth == 1 })
	status, hdr, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Errorf("third request: %d Retry-After %q: %s", status, hdr.Get("Retry-After"), body)
	}
	checkErrorBody(t, body)
	close(gate)
	for range 2 {
		if s := <-results; s != http.StatusOK {
			t.Errorf("held request: %d", s)
		}
	}
}
