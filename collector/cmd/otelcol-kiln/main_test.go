package main

import (
	"testing"

	"go.opentelemetry.io/collector/otelcol/otelcoltest"
)

// TestComponents: the distribution has exactly the standard component
// names, and the example configuration loads and validates with them.
func TestComponents(t *testing.T) {
	f, err := components()
	if err != nil {
		t.Fatal(err)
	}
	if f.Telemetry == nil {
		t.Error("no telemetry factory: the service cannot start")
	}
	got := map[string]bool{}
	for k := range f.Receivers {
		got["receiver/"+k.String()] = true
	}
	for k := range f.Processors {
		got["processor/"+k.String()] = true
	}
	for k := range f.Connectors {
		got["connector/"+k.String()] = true
	}
	for k := range f.Exporters {
		got["exporter/"+k.String()] = true
	}
	want := map[string]bool{"receiver/otlp": true, "processor/batch": true, "connector/kilnlatency": true,
		"exporter/prometheus": true, "exporter/otlphttp": true, "exporter/debug": true}
	for k := range want {
		if !got[k] {
			t.Errorf("missing %s", k)
		}
	}
	// otlphttp's factory also answers to its new name otlp_http.
	want["exporter/otlp_http"] = true
	for k := range got {
		if !want[k] {
			t.Errorf("unexpected component %s", k)
		}
	}
	cfg, err := otelcoltest.LoadConfigAndValidate("../../../examples/collector/otelcol-kiln.yaml", f)
	if err != nil {
		t.Fatalf("examples/collector/otelcol-kiln.yaml: %v", err)
	}
	if len(cfg.Service.Pipelines) != 2 {
		t.Errorf("%d pipelines, want traces and metrics", len(cfg.Service.Pipelines))
	}
}
