package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/schemas"
)

// TestConfigResolved: GET /v1/config reports what the engine runs with,
// not the zero "follow the backend" defaults of the flags.
func TestConfigResolved(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.Engine.MaxBatch, c.Engine.KVBudget = 0, 0 }))
	var cfg struct {
		Engine struct {
			MaxBatch     int `json:"max_batch"`
			KVBudget     int `json:"kv_budget"`
			PrefillChunk int `json:"prefill_chunk"`
		} `json:"engine"`
	}
	h.getJSON("/v1/config", &cfg)
	ec := h.eng.Config()
	want := []int{ec.MaxBatch, ec.KVBudget, ec.PrefillChunk}
	got := []int{cfg.Engine.MaxBatch, cfg.Engine.KVBudget, cfg.Engine.PrefillChunk}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("max_batch, kv_budget, prefill_chunk (-engine +/v1/config):\n%s", d)
	}
	if got[0] == 0 || got[1] == 0 {
		t.Errorf("/v1/config shows zero defaults %v", got)
	}
}

// TestConfigPrefixCache: /v1/config's prefix_cache says whether the
// engine caches and its byte bound, null when only the free KV budget
// bounds it.
func TestConfigPrefixCache(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		off  bool
		max  int64
		want map[string]any
	}{
		{"default", false, 0, map[string]any{"enabled": true, "max_bytes": nil}},
		{"bounded", false, 512 << 20, map[string]any{"enabled": true, "max_bytes": float64(512 << 20)}},
		{"off", true, 0, map[string]any{"enabled": false, "max_bytes": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, withConfig(func(c *Config) { c.Engine.PrefixCacheOff, c.Engine.PrefixCacheBytes = tt.off, tt.max }))
			var cfg struct {
				PrefixCache map[string]any `json:"prefix_cache"`
			}
			raw := h.getJSON("/v1/config", &cfg)
			if err := v.Validate(schemas.ObservabilityID, "config", raw); err != nil {
				t.Errorf("%v", err)
			}
			if diff := cmp.Diff(tt.want, cfg.PrefixCache); diff != "" {
				t.Errorf("prefix_cache (-want +got):\n%s", diff)
			}
		})
	}
}
