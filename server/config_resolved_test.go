package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
