package server

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRouteSpans: the HTTP server span of a traced route is named after
// the pattern the mux matched (one name for every model id, every unknown
// path), and probes, scrapes, dashboard polling and static files get none.
func TestRouteSpans(t *testing.T) {
	h, exp := tracedHarness(t)
	requests := []struct{ method, path string }{
		{http.MethodGet, "/v1/models"},
		{http.MethodGet, "/v1/models/" + h.model.ID},
		{http.MethodGet, "/v1/models/nope"},
		{http.MethodGet, "/v1/nothing"},
		{http.MethodGet, "/v1/nothing/else"},
		{http.MethodPost, "/v1/models"}, // 405, still the route's span
		{http.MethodGet, "/v1/config"},
		{http.MethodGet, "/health"},
		{http.MethodGet, "/v1/health"},
		{http.MethodGet, "/metrics"},
		{http.MethodGet, "/v1/stats/decode"},
		{http.MethodGet, "/v1/stats/recent-requests"},
		{http.MethodGet, "/v1/stats/recent-requests/chatcmpl-none"},
		{http.MethodGet, "/ui"},
		{http.MethodGet, "/ui/dashboard.js"},
		{http.MethodGet, "/v1/debug/model-state"}, // last: the test waits for its span
	}
	for _, r := range requests {
		h.do(r.method, r.path, nil, nil)
	}
	spans := waitSpans(t, exp, "GET /v1/debug/model-state")
	got := map[string]int{}
	for _, s := range spans {
		got[s.Name]++
	}
	want := map[string]int{
		"GET /v1/models":            1,
		"POST /v1/models":           1,
		"GET /v1/models/{id}":       2,
		"GET " + notFoundPattern:    2,
		"GET /v1/config":            1,
		"GET /v1/debug/model-state": 1,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("HTTP server spans by name (-want +got):\n%s", d)
	}
}

// TestRouteTable: every route is registered once, and the quiet and open
// sets are exactly the documented ones.
func TestRouteTable(t *testing.T) {
	s := &Server{}
	seen := map[string]bool{}
	var quiet, opened []string
	for _, rt := range s.routeTable() {
		if seen[rt.pattern] {
			t.Errorf("pattern %q registered twice", rt.pattern)
		}
		seen[rt.pattern] = true
		if rt.quiet {
			quiet = append(quiet, rt.pattern)
		}
		if rt.access != tokenRequired {
			opened = append(opened, rt.pattern)
		}
	}
	wantQuiet := []string{"/v1/stats/decode", "/v1/stats/recent-requests", "/v1/stats/recent-requests/{id}", "/health", "/v1/health", "/metrics", "/v1/maintenance/recent",
		"/v1/train/queue", "/v1/train/status", "/v1/train/status/{id}", "/ui", "/ui/{file...}", "/{$}"}
	if d := cmp.Diff(wantQuiet, quiet); d != "" {
		t.Errorf("untraced routes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"/health", "/ui", "/ui/{file...}", "/{$}"}, opened); d != "" {
		t.Errorf("routes open without the token (-want +got):\n%s", d)
	}
}
