package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/kernels"
	"github.com/kiln-ai/kiln/schemas"
)

// TestConfigKernels: /v1/config and the debug state report the kernel path
// the pool runs (as cmd resolved it; the harness resolves it as cmd does), every
// path this CPU can run and its features, valid against the closed config
// schema on every path this machine has.
func TestConfigKernels(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	type kernelsJSON struct {
		Path        string   `json:"path"`
		Paths       []string `json:"paths"`
		CPUFeatures string   `json:"cpu_features"`
	}
	for _, set := range kernels.Paths() {
		t.Run("path="+set, func(t *testing.T) {
			h := newHarness(t, withConfig(func(c *Config) { c.KernelPath, c.DebugState = set, true }))
			body := h.getJSON("/v1/config", nil)
			if err := v.Validate(schemas.ObservabilityID, "config", body); err != nil {
				t.Errorf("config does not match its schema: %v\n%s", err, body)
			}
			var cfg struct {
				Kernels kernelsJSON `json:"kernels"`
			}
			if err := json.Unmarshal(body, &cfg); err != nil {
				t.Fatal(err)
			}
			want := kernelsJSON{Path: set, Paths: kernels.Paths(), CPUFeatures: kernels.CPUFeatures()}
			if d := cmp.Diff(want, cfg.Kernels); d != "" {
				t.Errorf("/v1/config kernels (-want +got):\n%s", d)
			}
			var state struct {
				Config struct {
					Kernels kernelsJSON `json:"kernels"`
				} `json:"config"`
			}
			h.getJSON("/v1/debug/model-state", &state)
			if d := cmp.Diff(want, state.Config.Kernels); d != "" {
				t.Errorf("debug state kernels (-want +got):\n%s", d)
			}
		})
	}
}

// TestConfigKernelPathValidate: a kernel path this CPU cannot run is a
// configuration error naming its key.
func TestConfigKernelPathValidate(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
	}{
		{"", true},
		{kernels.Path(), true},
		{"generic", true},
		{"avx9000", false},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		c.KernelPath, c.KernelPaths = tc.path, kernels.Paths()
		err := c.Validate()
		if (err == nil) != tc.ok || (err != nil && !strings.HasPrefix(err.Error(), "kernel_path:")) {
			t.Errorf("Validate with kernel path %q: %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}
