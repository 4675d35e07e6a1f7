package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestCORS: off by default; with origins listed, only those get the
// headers, and their preflight is answered before the token check.
func TestCORS(t *testing.T) {
	preflight := map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type"}
	t.Run("off by default", func(t *testing.T) {
		h := newHarness(t)
		_, hdr, _ := h.do(http.MethodGet, "/v1/models", nil, map[string]string{"Origin": "http://localhost:3000"})
		if v := hdr.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("Access-Control-Allow-Origin %q without --cors-origin", v)
		}
		if status, hdr, _ := h.do(http.MethodOptions, chatPath, nil, preflight); status == http.StatusNoContent || hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight answered %d with CORS headers %v while CORS is off", status, hdr)
		}
	})
	h := newHarness(t, withConfig(func(c *Config) {
		c.CORSOrigins = []string{"http://localhost:3000", "https://app.example.com/"}
		c.AccessToken = "secret"
	}))
	tests := []struct {
		name       string
		method     string
		hdr        map[string]string
		wantStatus int
		wantOrigin string
	}{
		{"preflight of a listed origin, no token", http.MethodOptions, preflight, http.StatusNoContent, "http://localhost:3000"},
		{"listed origin with the token", http.MethodGet, map[string]string{"Origin": "https://app.example.com", "Authorization": "Bearer secret"}, http.StatusOK, "https://app.example.com"},
		{"listed origin without the token", http.MethodGet, map[string]string{"Origin": "http://localhost:3000"}, http.StatusUnauthorized, "http://localhost:3000"},
		{"other origin", http.MethodGet, map[string]string{"Origin": "https://evil.example", "Authorization": "Bearer secret"}, http.StatusOK, ""},
		{"other origin's preflight", http.MethodOptions, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, http.StatusUnauthorized, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := h.do(tc.method, "/v1/models", nil, tc.hdr)
			if status != tc.wantStatus {
				t.Errorf("status %d, want %d: %s", status, tc.wantStatus, body)
			}
			if got := hdr.Get("Access-Control-Allow-Origin"); got != tc.wantOrigin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.wantOrigin)
			}
			if tc.wantStatus == http.StatusNoContent {
				if m := hdr.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") {
					t.Errorf("Access-Control-Allow-Methods %q", m)
				}
				if a := strings.ToLower(hdr.Get("Access-Control-Allow-Headers")); !strings.Contains(a, "authorization") {
					t.Errorf("Access-Control-Allow-Headers %q", a)
				}
			}
		})
	}
}

func TestValidateOrigins(t *testing.T) {
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"http://localhost:3000", true}, {"https://app.example.com", true}, {"*", true},
		{"localhost:3000", false}, {"ftp://x", false}, {"https://app.example.com/path", false}, {"", false},
	} {
		if err := validateOrigins([]string{tc.origin}); (err == nil) != tc.ok {
			t.Errorf("validateOrigins(%q) = %v, want ok %v", tc.origin, err, tc.ok)
		}
	}
}

// TestRootRedirect: GET / opens the dashboard.
func TestRootRedirect(t *testing.T) {
	h := newHarness(t)
	h.ts.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	status, hdr, _ := h.do(http.MethodGet, "/", nil, nil)
	if status != http.StatusFound || hdr.Get("Location") != "/ui" {
		t.Errorf("GET / = %d Location %q, want 302 to /ui", status, hdr.Get("Location"))
	}
	if status, _, _ := h.do(http.MethodGet, "/nothing", nil, nil); status != http.StatusNotFound {
		t.Errorf("GET /nothing = %d, want 404", status)
	}
}

// TestRequestIDHeader: a traced response's X-Request-Id is its trace id;
// untraced routes get an id of the same form.
func TestRequestIDHeader(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	h := newHarness(t, withSpans(exp))
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	_, hdr, _ := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
	id := hdr.Get(requestIDHeader)
	if !hex32.MatchString(id) {
		t.Fatalf("X-Request-Id %q is not a 32-hex trace id", id)
	}
	var ids []string
	for _, s := range exp.GetSpans() {
		if s.Name == "POST "+chatPath {
			ids = append(ids, s.SpanContext.TraceID().String())
		}
	}
	if d := cmp.Diff([]string{id}, ids); d != "" {
		t.Errorf("trace ids of the chat server span (-X-Request-Id +spans):\n%s", d)
	}
	_, hdr, _ = h.do(http.MethodGet, "/health", nil, nil)
	if other := hdr.Get(requestIDHeader); !hex32.MatchString(other) || other == id {
		t.Errorf("untraced X-Request-Id %q", other)
	}
}

// TestServedModelName: --served-model-name is the id clients see and name.
func TestServedModelName(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.ServedModelName = "my-model" }))
	var list struct{ Data []struct{ ID string } }
	h.getJSON("/v1/models", &list)
	if len(list.Data) != 1 || list.Data[0].ID != "my-model" {
		t.Errorf("models %+v, want my-model", list.Data)
	}
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"model": "my-model"}), nil); status != http.StatusOK || !strings.Contains(string(body), `"model":"my-model"`) {
		t.Errorf("chat as my-model: %d %s", status, body)
	}
	if status, _, _ := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil); status != http.StatusNotFound {
		t.Errorf("chat with the file's model id: %d, want 404", status)
	}
}

// TestContextLengthMessage: the error states the prompt and context lengths.
func TestContextLengthMessage(t *testing.T) {
	h := newHarness(t)
	prompt := strings.Repeat("sun moon star ", 3000)
	var promptLen struct{ Tokens []int }
	_, _, raw := h.do(http.MethodPost, "/tokenize", map[string]any{"content": prompt, "add_special": true}, nil)
	if err := json.Unmarshal(raw, &promptLen); err != nil {
		t.Fatal(err)
	}
	status, _, body := h.do(http.MethodPost, completionsPath, map[string]any{"model": h.model.ID, "prompt": prompt}, nil)
	if status != http.StatusBadRequest {
		t.Fatalf("status %d: %s", status, body)
	}
	msg := string(body)
	ctx := h.model.Model.Config.SeqLen
	for _, want := range []string{strconv.Itoa(ctx) + " tokens", strconv.Itoa(len(promptLen.Tokens)) + " tokens"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %s does not state %q", msg, want)
		}
	}
}
