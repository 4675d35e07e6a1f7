package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// jaegerTraces is the part of Jaeger's HTTP API answer (/api/traces) the
// test reads.
type jaegerTraces struct {
	Data []struct {
		TraceID string       `json:"traceID"`
		Spans   []jaegerSpan `json:"spans"`
	} `json:"data"`
}

type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s *jaegerSpan) tag(k string) any {
	for _, t := range s.Tags {
		if t.Key == k {
			return t.Value
		}
	}
	return nil
}

// startJaeger runs Jaeger v2 with in-memory storage, OTLP/HTTP in and the
// query API (and UI) on free ports; it returns both URLs.
func startJaeger(t *testing.T) (otlp, query string) {
	t.Helper()
	bin := requireBuiltTool(t, "jaeger")
	otlpAddr, queryAddr, grpcAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`, queryAddr, grpcAddr, otlpAddr)
	path := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startChild(t, "jaeger", bin, "--config", path)
	query = "http://" + queryAddr
	waitFor(t, 60*time.Second, "jaeger's query API", func() bool {
		resp, err := http.Get(query + "/api/services")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return "http://" + otlpAddr, query
}

// TestJaeger: Kiln's OTLP goes to a real Jaeger v2; its HTTP API shows
// the `chat {model}` span with its phase children, and the `kiln.stall`
// span of the deliberate prefill stall linked to the chat span of the
// request whose prefill blocked it.
func TestJaeger(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	otlp, query := startJaeger(t)
	const service = "kiln-e2e-jaeger"
	srv := startServeEnv(t, exportEnv(otlp, service), "--prefill-chunk", "2048")
	srv.stallWorkload(t, stallPromptWords)

	var why string
	deadline := time.Now().Add(60 * time.Second)
	for {
		var ok bool
		ok, why = jaegerShowsStall(t, query, service)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger does not show the stall after 60 s: %s", why)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// jaegerShowsStall queries Jaeger for the service's traces and checks
// them; false with the reason while something is missing.
func jaegerShowsStall(t *testing.T, query, service string) (bool, string) {
	t.Helper()
	resp, err := http.Get(query + "/api/traces?limit=100&service=" + url.QueryEscape(service))
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	var tr jaegerTraces
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		return false, "decoding /api/traces: " + err.Error()
	}
	byID := map[string]*jaegerSpan{}
	children := map[string]map[string]bool{} // parent span id -> child operation names
	var stalls []*jaegerSpan
	for _, d := range tr.Data {
		for i := range d.Spans {
			s := &d.Spans[i]
			byID[s.SpanID] = s
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					if children[r.SpanID] == nil {
						children[r.SpanID] = map[string]bool{}
					}
					children[r.SpanID][s.OperationName] = true
				}
			}
			if s.OperationName == "kiln.stall" && s.tag("kiln.stall.reason") == "actor_prefill" {
				stalls = append(stalls, s)
			}
		}
	}
	if len(stalls) == 0 {
		return false, fmt.Sprintf("no kiln.stall span with reason actor_prefill among %d traces", len(tr.Data))
	}
	for _, st := range stalls {
		for _, r := range st.References {
			target := byID[r.SpanID]
			if r.RefType == "CHILD_OF" || target == nil || target.OperationName != "chat kiln-tiny" {
				continue
			}
			kids := children[target.SpanID]
			for _, want := range []string{"kiln.tokenization", "kiln.actor_queue", "kiln.actor_admission", "kiln.actor_prefill"} {
				if !kids[want] {
					return false, fmt.Sprintf("the blocking chat span %s has no %s child (children %v)", target.SpanID, want, kids)
				}
			}
			return true, ""
		}
	}
	return false, fmt.Sprintf("no actor_prefill stall span links to a chat kiln-tiny span (%d stall spans)", len(stalls))
}
