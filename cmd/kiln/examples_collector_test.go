package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// yamlScalars flattens the block mappings of a simple YAML file (no flow
// mappings, no multi-line scalars) into dotted paths to their scalar values:
// enough to read the example configurations' endpoints without a YAML
// dependency.
func yamlScalars(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	type level struct {
		indent int
		key    string
	}
	var stack []level
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "- ") {
			continue
		}
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, level{indent, key})
		if v := strings.TrimSpace(value); v != "" && !strings.HasPrefix(v, "#") {
			keys := make([]string, len(stack))
			for i, l := range stack {
				keys[i] = l.key
			}
			out[strings.Join(keys, ".")] = v
		}
	}
	return out
}

// TestCollectorExamplesReachJaeger: the Collector examples export to the
// port and protocol the jaeger.yaml beside them listens on (otelcol.yaml
// once sent OTLP/gRPC to 14317, where nothing listened).
func TestCollectorExamplesReachJaeger(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples", "collector")
	jaeger := yamlScalars(t, filepath.Join(dir, "jaeger.yaml"))
	listens := map[string]string{} // exporter type -> address it must reach
	if a := jaeger["receivers.otlp.protocols.http.endpoint"]; a != "" {
		listens["otlphttp"] = "http://" + a
	}
	if a := jaeger["receivers.otlp.protocols.grpc.endpoint"]; a != "" {
		listens["otlp"] = a
	}
	if len(listens) == 0 {
		t.Fatalf("jaeger.yaml has no OTLP receiver endpoint: %v", jaeger)
	}
	for _, name := range []string{"otelcol.yaml", "otelcol-kiln.yaml"} {
		cfg := yamlScalars(t, filepath.Join(dir, name))
		found := false
		for path, v := range cfg {
			kind, ok := strings.CutPrefix(path, "exporters.")
			if !ok || !strings.HasSuffix(kind, "/jaeger.endpoint") {
				continue
			}
			found = true
			kind = strings.TrimSuffix(kind, "/jaeger.endpoint")
			if want, ok := listens[kind]; !ok || v != want {
				t.Errorf("%s: exporter %s/jaeger sends to %q; jaeger.yaml listens on %v", name, kind, v, listens)
			}
		}
		if !found {
			t.Errorf("%s has no exporter to Jaeger (exporters.*/jaeger.endpoint): %v", name, cfg)
		}
	}
}
