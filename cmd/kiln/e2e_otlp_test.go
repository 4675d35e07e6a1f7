package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a minimal OTLP/HTTP trace receiver: it decodes every
// ExportTraceServiceRequest (protobuf, optionally gzip) and keeps the spans.
type otlpReceiver struct {
	mu        sync.Mutex
	spans     []*tracepb.Span
	resources []*resourcepb.Resource // one per ResourceSpans received
	errs      []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			o.fail(w, err.Error())
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		o.fail(w, err.Error())
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		o.fail(w, "not an OTLP protobuf request: "+err.Error())
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		o.resources = append(o.resources, rs.Resource)
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (o *otlpReceiver) fail(w http.ResponseWriter, msg string) {
	o.mu.Lock()
	o.errs = append(o.errs, msg)
	o.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

func attr(s *tracepb.Span, key string) (string, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.String(), true
		}
	}
	return "", false
}

// TestOTLPExport runs kiln serve with OTEL_EXPORTER_OTLP_ENDPOINT set to a
// real OTLP/HTTP receiver, makes a deliberate prefill stall, stops the
// server (which flushes) and checks what arrived: the chat spans with their
// phase children, and a kiln.stall span whose span link points at the
// long-prompt request's chat span.
func TestOTLPExport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()

	srv := startServeEnv(t, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=kiln-e2e",
	}, "--prefill-chunk", "2048")
	srv.stallWorkload(t, stallPromptWords)
	for _, path := range []string{"/metrics", "/v1/stats/decode"} {
		if got := getStatus(t, srv.URL+path, ""); got != http.StatusOK {
			t.Fatalf("GET %s: %d", path, got)
		}
	}
	srv.stop() // graceful shutdown flushes the span exporter

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.errs) > 0 {
		t.Fatalf("receiver rejected exports: %v", recv.errs)
	}
	byID := map[string]*tracepb.Span{}
	var chats, stalls []*tracepb.Span
	names := map[string]int{}
	for _, s := range recv.spans {
		byID[string(s.SpanId)] = s
		names[s.Name]++
		switch {
		case strings.HasPrefix(s.Name, "chat "):
			chats = append(chats, s)
		case s.Name == "kiln.stall":
			stalls = append(stalls, s)
		}
	}
	t.Logf("received %d spans: %v", len(recv.spans), names)
	for _, quiet := range []string{"GET /health", "GET /metrics", "GET /v1/stats/decode"} {
		if names[quiet] > 0 {
			t.Errorf("%d %q spans exported: probes, scrapes and polling are not traced", names[quiet], quiet)
		}
	}
	if len(chats) != 2 {
		t.Fatalf("chat spans = %d, want 2 (one per request)", len(chats))
	}
	for _, c := range chats {
		if c.Name != "chat kiln-tiny" {
			t.Errorf("chat span name %q, want \"chat kiln-tiny\"", c.Name)
		}
		if v, _ := attr(c, "gen_ai.operation.name"); !strings.Contains(v, "chat") {
			t.Errorf("chat span gen_ai.operation.name = %q", v)
		}
	}
	for _, phase := range []string{"kiln.tokenization", "kiln.actor_queue", "kiln.actor_prefill"} {
		if names[phase] < 2 {
			t.Errorf("%s spans = %d, want one per request", phase, names[phase])
		}
	}
	// The stall: in the decoding request's trace, linked to the long
	// request's chat span (another trace), as actor_prefill.
	var linked bool
	for _, st := range stalls {
		if v, _ := attr(st, "kiln.stall.reason"); v != "" && !strings.Contains(v, "actor_prefill") {
			continue
		}
		for _, l := range st.Links {
			target, ok := byID[string(l.SpanId)]
			if !ok || !strings.HasPrefix(target.Name, "chat ") || !bytes.Equal(target.TraceId, l.TraceId) {
				continue
			}
			if bytes.Equal(l.TraceId, st.TraceId) {
				continue // the request's own prefill, not the blocker
			}
			linked = true
		}
	}
	if len(stalls) == 0 || !linked {
		t.Fatalf("want an exported kiln.stall span linked to the long request's chat span; stalls %d, linked %v", len(stalls), linked)
	}
}
