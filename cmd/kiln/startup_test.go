package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/server"
	"github.com/kiln-ai/kiln/telemetry"
)

// TestContextWarning: a --context the model does not run with is a
// warning naming both numbers; one it runs with, or none, is silent.
func TestContextWarning(t *testing.T) {
	gguf := sharedModelPath(t, "ref/tiny-llama.F32.gguf") // its own context is 512
	for _, tc := range []struct {
		spec      string
		requested int
		want      string
	}{
		{llama.TinyID, 0, ""},
		{llama.TinyID, 2048, ""},
		{llama.TinyID, 9000, "--context 9000 is above the model's own context of 2048: capped at 2048"},
		{llama.TinyID, 512, "--context 512 does not apply to kiln-tiny, whose context is fixed (embedded): running with 2048"},
		{gguf, 1024, "--context 1024 is above the model's own context of 512: capped at 512"},
		{gguf, 256, ""},
	} {
		l, err := llama.OpenWith(tc.spec, llama.OpenOptions{Context: tc.requested})
		if err != nil {
			t.Fatal(err)
		}
		if got := contextWarning(tc.requested, l); got != tc.want {
			t.Errorf("contextWarning(%d, %s) = %q, want %q", tc.requested, l.ID, got, tc.want)
		}
		_ = l.Close()
	}
}

// TestServingLine: the ready line carries what was loaded and how it is
// served as fields, null where a fact does not apply, and never an
// exporter's credentials.
func TestServingLine(t *testing.T) {
	l, err := llama.Open(llama.TinyID)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	cfg := server.DefaultConfig()
	cfg.TraceExport = traceExport(telemetry.Config{OTLPTracesEndpoint: "http://u:p@collector:4318/v1/traces"})
	var out bytes.Buffer
	log := zerolog.New(&out)
	f := server.FactsOf(l)
	logServing(&log, f, cfg, 4)
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	want := map[string]any{
		"model": "kiln-tiny", "format": "embedded", "architecture": "llama", "file_bytes": nil, "context": 2048.0,
		"model_context": 2048.0, "kv_bytes_per_token": float64(f.KVBytesPerToken), "kv_bytes_per_slot": float64(f.KVBytesPerSlot),
		"weight_types": map[string]any{"f32": 57.0}, "mapped_bytes": 0.0, "adapter_dir": "./adapters", "serving_profile": "stable",
		"trace_export": true, "trace_endpoint": "http://collector:4318/v1/traces", "slots": 4.0,
		"prefix_cache": true, "prefix_cache_bytes": nil,
	}
	for k, v := range want {
		if d := cmp.Diff(v, got[k]); d != "" {
			t.Errorf("%s (-want +got):\n%s", k, d)
		}
	}
	for _, k := range []string{"parameters", "weight_bytes", "resident_bytes"} {
		if _, ok := got[k]; !ok {
			t.Errorf("the line lacks %s: %s", k, out.Bytes())
		}
	}
	if strings.Contains(out.String(), "u:p") {
		t.Errorf("credentials in the line: %s", out.Bytes())
	}
	var sum bytes.Buffer
	printSummary(&sum, f, cfg, 4)
	for _, w := range []string{"kiln serving kiln-tiny", "embedded llama, 20.6M parameters, weights f32 x57", "context  2048 of the model's 2048", "trace export http://collector:4318/v1/traces (http/protobuf)"} {
		if !strings.Contains(sum.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, sum.String())
		}
	}
}

// TestContextCapWarnedCLI: the built binary warns of a capped --context on
// stderr, naming both numbers, and still runs.
func TestContextCapWarnedCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	code, stdout, stderr := runKiln(t, "generate", "--context", "9000", "--prompt", "hi", "--max-tokens", "1", "--seed", "1")
	if code != exitOK || stdout == "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if want := "kiln generate: warning: --context 9000 is above the model's own context of 2048: capped at 2048"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
}
