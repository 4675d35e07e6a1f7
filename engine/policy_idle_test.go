package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/timing"
)

// TestIdleTrigger: an automatic trim is due once the engine has been idle
// for the whole idle period after generating, and only once per idle
// period; an engine that never worked, or works again, is not trimmed.
func TestIdleTrigger(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type obs struct {
		at     time.Duration
		active int
		tokens uint64
	}
	tests := []struct {
		name string
		seq  []obs
		want []bool
	}{
		{"never worked", []obs{{0, 0, 0}, {40 * time.Second, 0, 0}, {80 * time.Second, 0, 0}}, []bool{false, false, false}},
		{"idle long enough after work", []obs{{0, 1, 5}, {10 * time.Second, 0, 9}, {39 * time.Second, 0, 9}, {40 * time.Second, 0, 9}, {90 * time.Second, 0, 9}},
			[]bool{false, false, false, true, false}},
		{"work again restarts the period", []obs{{0, 0, 5}, {20 * time.Second, 0, 6}, {45 * time.Second, 0, 6}, {50 * time.Second, 0, 6}},
			[]bool{false, false, false, true}},
		{"busy without new tokens (a long prefill) is not idle", []obs{{0, 0, 5}, {10 * time.Second, 1, 5}, {35 * time.Second, 1, 5}, {41 * time.Second, 0, 5}, {71 * time.Second, 0, 5}},
			[]bool{false, false, false, false, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trig := idleTrigger{idle: 30 * time.Second}
			var got []bool
			for _, o := range tc.seq {
				got = append(got, trig.observe(t0.Add(o.at), timing.EngineSnapshot{Active: o.active, TokensGenerated: o.tokens}))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("trims (-want +got):\n%s", d)
			}
		})
	}
}
