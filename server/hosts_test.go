package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHostCheck: a loopback server answers only loopback names and the
// allowed hosts (DNS rebinding); beyond loopback every name passes
// unless allowed hosts are set. Refused hosts get 403 before routing,
// on every path, in the OpenAI shape.
func TestHostCheck(t *testing.T) {
	loop := newHarness(t, withConfig(func(c *Config) { c.AllowedHosts = []string{"kiln.lan"} }))
	wide := newHarness(t, withConfig(func(c *Config) { c.Addr = "0.0.0.0:8420"; c.AllowedHosts = nil }))
	wideListed := newHarness(t, withConfig(func(c *Config) { c.Addr = "0.0.0.0:8420"; c.AllowedHosts = []string{"kiln.lan"} }))
	star := newHarness(t, withConfig(func(c *Config) { c.AllowedHosts = []string{"*"} }))
	tests := []struct {
		name string
		h    *harness
		host string
		path string
		want int
	}{
		{"localhost", loop, "localhost", "/health", 200},
		{"localhost with port", loop, "localhost:8420", "/health", 200},
		{"ipv4 loopback", loop, "127.0.0.1:8420", "/v1/models", 200},
		{"other loopback ip", loop, "127.0.0.2", "/v1/models", 200},
		{"ipv6 loopback", loop, "[::1]:8420", "/v1/models", 200},
		{"ipv6 loopback bare", loop, "[::1]", "/v1/models", 200},
		{"case and trailing dot", loop, "LocalHost.:8420", "/health", 200},
		{"allowed host", loop, "KILN.lan:8420", "/v1/models", 200},
		{"rebinding domain", loop, "evil.example:8420", "/v1/stats/recent-requests", 403},
		{"rebinding on the probe", loop, "evil.example", "/health", 403},
		{"rebinding on a chat", loop, "evil.example", chatPath, 403},
		{"rebinding on an unknown path", loop, "evil.example", "/nowhere", 403},
		{"localhost suffix", loop, "localhost.evil.example", "/health", 403},
		{"private ip is not loopback", loop, "192.168.1.5", "/health", 403},
		{"wide open beyond loopback", wide, "evil.example", "/v1/models", 200},
		{"listed beyond loopback", wideListed, "kiln.lan", "/v1/models", 200},
		{"loopback beyond loopback", wideListed, "localhost", "/v1/models", 200},
		{"unlisted beyond loopback", wideListed, "other.example", "/v1/models", 403},
		{"star", star, "anything.example", "/v1/models", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodGet
			if tt.path == chatPath {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, tt.path, strings.NewReader(`{}`))
			req.Host = tt.host
			rec := httptest.NewRecorder()
			tt.h.srv.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.want, rec.Body.String())
			}
			if tt.want == http.StatusForbidden {
				checkErrorBody(t, rec.Body.Bytes())
				if !strings.Contains(rec.Body.String(), "--allowed-hosts") {
					t.Errorf("403 does not say how to allow the host: %s", rec.Body.String())
				}
			}
		})
	}
	// Over a real connection, the default host (127.0.0.1:port) passes.
	if status, _, body := loop.do(http.MethodGet, "/v1/models", nil, nil); status != http.StatusOK {
		t.Errorf("real client: %d %s", status, body)
	}
}
