package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// sdkRun is what examples/clients/stream-timing.mjs --json prints.
type sdkRun struct {
	Chunks   []map[string]any `json:"chunks"`
	Events   []map[string]any `json:"events"`
	Order    []string         `json:"order"`
	Summary  map[string]any   `json:"summary"`
	Response map[string]any   `json:"response"`
}

func runSDK(t *testing.T, baseURL string, args ...string) sdkRun {
	t.Helper()
	node := requireTool(t, "node")
	dir := filepath.Join(repoRoot(t), "examples", "clients")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		msg := "the openai npm package is not installed: run scripts/install-e2e"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(node, append([]string{"stream-timing.mjs", "--json", "--base-url", baseURL + "/v1"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("openai SDK run failed: %v\n%s", err, stderr)
	}
	var r sdkRun
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("SDK output is not JSON: %v\n%s", err, out)
	}
	return r
}

// TestOpenAISDK drives kiln serve with the official openai npm package,
// unmodified: a non-streaming and a streaming chat, without and with the
// include_performance opt-in passed as an extra body field.
func TestOpenAISDK(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	requireTool(t, "node")
	srv := startServe(t)

	t.Run("streaming without opt-in is a pure OpenAI stream", func(t *testing.T) {
		r := runSDK(t, srv.URL, "--no-timing", "--max-tokens", "6", "Tell me a story.")
		if len(r.Events) != 0 {
			t.Errorf("got %d kiln.token_timing events without opt-in, want 0", len(r.Events))
		}
		if r.Summary != nil {
			t.Errorf("terminal chunk carries metadata without opt-in: %v", r.Summary)
		}
		for i, c := range r.Chunks {
			if c["object"] != "chat.completion.chunk" {
				t.Errorf("chunk %d object = %v, want chat.completion.chunk", i, c["object"])
			}
			if _, ok := c["metadata"]; ok {
				t.Errorf("chunk %d has a metadata key without opt-in", i)
			}
		}
		if len(r.Chunks) == 0 {
			t.Fatal("no chunks")
		}
	})

	t.Run("streaming with include_performance", func(t *testing.T) {
		r := runSDK(t, srv.URL, "--max-tokens", "8", "Explain the pause.")
		if len(r.Events) == 0 {
			t.Fatal("no kiln.token_timing events with include_performance: true")
		}
		for i, e := range r.Events {
			if got := int(e["token_index"].(float64)); got != i {
				t.Errorf("event %d token_index = %d, want %d", i, got, i)
			}
			if len(e) != 14 {
				t.Errorf("event %d has %d fields, want 14: %v", i, len(e), e)
			}
		}
		if r.Events[0]["blocking_phase"] != nil || r.Events[0]["blocking_phase_ms"] != nil {
			t.Errorf("first event has blocking fields %v/%v, want null", r.Events[0]["blocking_phase"], r.Events[0]["blocking_phase_ms"])
		}
		// Each timing event follows its token's content chunk: at every point
		// of the stream there are no more timing events than content chunks
		// (one allowance for a final end-of-sequence token, whose text is
		// empty), and the finish chunk comes after all of them.
		timings, contents, finish := 0, 0, -1
		for i, o := range r.Order {
			switch o {
			case "timing":
				timings++
				if timings > contents+1 || (timings > contents && i != len(r.Order)-2) {
					t.Errorf("timing event %d at position %d precedes its content: order %v", timings-1, i, r.Order)
				}
			case "content":
				contents++
			case "finish":
				finish = i
			}
		}
		if timings != len(r.Events) || finish != len(r.Order)-1 {
			t.Errorf("order %v: want every timing event before the finish chunk, finish last", r.Order)
		}
		if r.Summary == nil {
			t.Fatal("terminal chunk has no metadata.performance.latency")
		}
		if got := int(r.Summary["emitted_tokens"].(float64)); got != len(r.Events) {
			t.Errorf("summary emitted_tokens = %d, events = %d", got, len(r.Events))
		}
		if got := int(r.Summary["gap_samples"].(float64)); got != len(r.Events)-1 {
			t.Errorf("summary gap_samples = %d, want %d", got, len(r.Events)-1)
		}
	})

	t.Run("non-streaming with include_performance", func(t *testing.T) {
		r := runSDK(t, srv.URL, "--non-stream", "--max-tokens", "5", "Hello.")
		choices, _ := r.Response["choices"].([]any)
		if len(choices) != 1 {
			t.Fatalf("response choices = %v", r.Response["choices"])
		}
		meta, _ := r.Response["metadata"].(map[string]any)
		perf, _ := meta["performance"].(map[string]any)
		lat, _ := perf["latency"].(map[string]any)
		if lat == nil {
			t.Fatalf("no metadata.performance.latency in %v", r.Response)
		}
		phases, _ := lat["phases"].(map[string]any)
		if v, ok := phases["client_delivery_ms"]; !ok || v != nil {
			t.Errorf("non-streaming client_delivery_ms = %v (present %v), want null", v, ok)
		}
	})
}
