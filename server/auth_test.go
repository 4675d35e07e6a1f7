package server

import (
	"bytes"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestUnauthenticatedMovesNoCounter: requests without the token, however
// many, change neither the outcome counts of /health nor the request
// metrics, nor make spans: whoever lacks the token cannot write into what
// token holders read.
func TestUnauthenticatedMovesNoCounter(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	h := newHarness(t, withSpans(exp), withConfig(func(c *Config) { c.AccessToken = "s3cret" }))
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	metrics := func() []byte {
		status, _, body := h.do(http.MethodGet, "/metrics", nil, auth)
		if status != http.StatusOK {
			t.Fatalf("metrics: %d", status)
		}
		var lines [][]byte
		for _, l := range bytes.Split(body, []byte("\n")) {
			if bytes.HasPrefix(l, []byte("kiln_requests_total")) {
				lines = append(lines, l)
			}
		}
		return bytes.Join(lines, []byte("\n"))
	}
	var before healthBody
	h.getJSON("/health", &before)
	mBefore := metrics()
	for range 5 {
		if status, _, _ := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil); status != http.StatusUnauthorized {
			t.Fatalf("chat without token: %d", status)
		}
		if status, _, _ := h.do(http.MethodPost, chatPath, "{", map[string]string{"Authorization": "Bearer nope"}); status != http.StatusUnauthorized {
			t.Fatalf("chat with a wrong token: %d", status)
		}
	}
	var after healthBody
	h.getJSON("/health", &after)
	if after.Requests != before.Requests {
		t.Errorf("outcome counts moved: %+v -> %+v", before.Requests, after.Requests)
	}
	if m := metrics(); !bytes.Equal(m, mBefore) {
		t.Errorf("kiln_requests_total moved:\n%s\n->\n%s", mBefore, m)
	}
	// One authenticated chat: its span is the only one (spans export in
	// order, so the refused requests' would be there by then).
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), auth); status != http.StatusOK {
		t.Fatalf("chat with the token: %d %s", status, body)
	}
	const name = "POST " + chatPath
	n := 0
	for _, sp := range waitSpans(t, exp, name) {
		if sp.Name == name {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d chat spans, want 1: the refused requests made spans", n)
	}
}
