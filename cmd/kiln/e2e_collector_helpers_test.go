package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/internal/promseries"
	"github.com/kiln-ai/kiln/telemetry"
)

// requireBuiltTool finds a binary that scripts/build-otel-tools builds
// (otelcol-kiln, jaeger): on PATH or in $(go env GOPATH)/bin, where the
// script installs it. Without it the test skips with the hint, except in
// CI, where a missing tool fails it.
func requireBuiltTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s not found: run scripts/build-otel-tools (scripts/install-e2e runs it) to build it", name)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// startChild runs a tool as a child process until the test ends (SIGTERM,
// then kill after 20 s), keeping its output for a failure message.
func startChild(t *testing.T, name string, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var exit error
		select {
		case exit = <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			exit = <-done
		}
		if t.Failed() {
			t.Logf("%s exit: %v", name, exit)
			t.Logf("%s output:\n%s", name, logs.String())
		}
	})
}

// otelcolKiln is a running otelcol-kiln: OTLP/HTTP in, the kilnlatency
// connector's families on a Prometheus exporter.
type otelcolKiln struct {
	OTLP    string // http://host:port, for OTEL_EXPORTER_OTLP_ENDPOINT
	Metrics string // the prometheus exporter's /metrics URL
}

// startOtelcolKiln runs otelcol-kiln with a pipeline otlp -> batch ->
// kilnlatency -> prometheus, flushing every 500 ms.
func startOtelcolKiln(t *testing.T) *otelcolKiln {
	t.Helper()
	bin := requireBuiltTool(t, "otelcol-kiln")
	otlpAddr, promAddr := freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch:
    timeout: 200ms
connectors:
  kilnlatency:
    flush_interval: 500ms
exporters:
  prometheus:
    endpoint: %s
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [kilnlatency]
    metrics:
      receivers: [kilnlatency]
      exporters: [prometheus]
`, otlpAddr, promAddr)
	path := filepath.Join(t.TempDir(), "otelcol-kiln.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startChild(t, "otelcol-kiln", bin, "--config", path)
	o := &otelcolKiln{OTLP: "http://" + otlpAddr, Metrics: "http://" + promAddr + "/metrics"}
	waitFor(t, 60*time.Second, "otelcol-kiln's prometheus exporter", func() bool {
		_, err := scrapeText(o.Metrics)
		return err == nil
	})
	return o
}

// exportEnv makes kiln serve export 100% of its spans to endpoint.
func exportEnv(endpoint, service string) []string {
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=" + service,
		"OTEL_TRACES_SAMPLER=always_on",
		"OTEL_BSP_SCHEDULE_DELAY=200",
	}
}

func scrapeText(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	return string(b), nil
}

// requestFamilies are the kiln_* request families both paths derive
// (those of docs/latency-guide.md#prometheus less kiln_active_requests, which the connector cannot
// know: a span arrives once its request has ended).
func requestFamilies(name string) bool {
	switch name {
	case telemetry.MetricITL, telemetry.MetricStalls, telemetry.MetricTTFT, telemetry.MetricPhase,
		telemetry.MetricDuration, telemetry.MetricRequests, telemetry.MetricTokens:
		return true
	}
	return false
}

// collectorLabel reports the labels a Collector's Prometheus exporter adds
// from the resource and scope, which the server's own exposition has not.
func collectorLabel(name string) bool {
	return name == "job" || name == "instance" || strings.HasPrefix(name, "otel_scope_")
}

// seriesOf scrapes url and keeps the request families.
func seriesOf(t *testing.T, url string) promseries.Series {
	t.Helper()
	text, err := scrapeText(url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := promseries.Parse(strings.NewReader(text), requestFamilies, collectorLabel)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitSameSeries polls until the connector's series equal want() (the
// servers' own, re-read each time), and fails with the difference after
// a minute.
func waitSameSeries(t *testing.T, o *otelcolKiln, want func() promseries.Series) {
	t.Helper()
	var diff []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		diff = promseries.Diff(want(), seriesOf(t, o.Metrics))
		if len(diff) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the connector's kiln_* series still differ from the servers' /metrics:\n%s", strings.Join(diff, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// e2eSeed is the workload's seed: KILN_E2E_SEED, or the clock (logged, so
// a failure can be replayed).
func e2eSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KILN_E2E_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("KILN_E2E_SEED=%q: %v", s, err)
		}
	}
	t.Logf("workload seed %d (KILN_E2E_SEED=%d replays it)", seed, seed)
	return seed
}

// seededWorkload sends, besides the deliberate prefill stall, a few chat
// requests picked from seed, concurrently: streamed or not, short or
// longer prompts, 1 to 24 tokens.
func (p *serveProcess) seededWorkload(t *testing.T, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed>>7|1))
	n := 3 + rng.IntN(4)
	bodies := make([]map[string]any, n)
	for i := range bodies {
		bodies[i] = map[string]any{
			"model": "kiln-tiny", "stream": rng.IntN(2) == 0, "max_tokens": 1 + rng.IntN(24),
			"temperature": 0, "seed": rng.IntN(1000),
			"messages": []map[string]any{{"role": "user", "content": longPrompt(1 + rng.IntN(200))}},
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, b := range bodies {
		wg.Go(func() { p.chatAny(ctx, t, b) })
	}
	p.stallWorkload(t, stallPromptWords)
	wg.Wait()
}

// chatAny posts a chat completion, streamed or not, and reads it to the
// end.
func (p *serveProcess) chatAny(ctx context.Context, t *testing.T, body map[string]any) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/v1/chat/completions", bytes.NewReader(b))
	if err != nil {
		t.Error(err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("chat: HTTP %d: %s", resp.StatusCode, out)
	}
}
