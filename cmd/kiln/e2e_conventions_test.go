package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOTLPResourceAttributes: the spans kiln serve exports carry the
// resource attributes of OTEL_RESOURCE_ATTRIBUTES beside the detected ones,
// with OTEL_SERVICE_NAME as service.name; responses carry X-Request-Id,
// the trace id of their exported spans.
func TestOTLPResourceAttributes(t *testing.T) {
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
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment.name=e2e,team.name=latency",
		"OTEL_PROPAGATORS=tracecontext,baggage",
	})
	status, hdr := postHeaders(t, srv.URL+"/v1/chat/completions", `{"model":"kiln-tiny","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`)
	if status != http.StatusOK {
		t.Fatalf("chat: %d", status)
	}
	requestID := hdr.Get("X-Request-Id")
	srv.stop() // flushes the exporter

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.errs) > 0 || len(recv.resources) == 0 {
		t.Fatalf("receiver: errors %v, %d resources", recv.errs, len(recv.resources))
	}
	got := map[string]string{}
	for _, kv := range recv.resources[0].GetAttributes() {
		got[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	for k, v := range map[string]string{"service.name": "kiln-e2e", "deployment.environment.name": "e2e", "team.name": "latency",
		"telemetry.sdk.language": "go", "process.runtime.name": "go"} {
		if got[k] != v {
			t.Errorf("resource %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	var traced bool
	for _, s := range recv.spans {
		if strings.HasPrefix(s.Name, "chat ") {
			traced = traced || hexID(s.TraceId) == requestID
			if v, _ := attr(s, "gen_ai.provider.name"); !strings.Contains(v, "kiln") {
				t.Errorf("chat span gen_ai.provider.name = %q", v)
			}
		}
	}
	if !traced {
		t.Errorf("X-Request-Id %q is not the trace id of an exported chat span", requestID)
	}
}

// TestMetricsConventions: /metrics of the running binary has the
// process_* and go_* families, kiln_build_info, the label-free
// kiln_adapter_active and kiln_adapter_revision (0: base), and promtool finds
// nothing to complain about.
func TestMetricsConventions(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	srv := startServe(t)
	srv.chat(t.Context(), t, map[string]any{"model": "kiln-tiny", "max_tokens": 2,
		"messages": []map[string]any{{"role": "user", "content": "hi"}}})
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, re := range []string{`(?m)^process_resident_memory_bytes `, `(?m)^process_cpu_seconds_total `, `(?m)^go_goroutines `,
		`(?m)^kiln_build_info\{goversion="go1[^"]*",revision="[^"]+",version="[^"]+"\} 1$`,
		`(?m)^kiln_adapter_active 0$`, `(?m)^kiln_adapter_revision 0$`} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("/metrics does not match %s", re)
		}
	}
	promtool := requireTool(t, "promtool")
	path := filepath.Join(t.TempDir(), "metrics.txt")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = in
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func postHeaders(t *testing.T, url, body string) (int, http.Header) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}

func hexID(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&0xf])
	}
	return string(out)
}
