package server

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// TestTokenBlockers: the engine's blockers reach telemetry with their
// kinds mapped, identities and instants unchanged, in the exchange's
// reused array (no allocation per token).
func TestTokenBlockers(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name string
		in   []engine.Blocker
		want []latency.Blocker
	}{
		{"none", nil, []latency.Blocker{}},
		{
			"prefill and lock wait",
			[]engine.Blocker{
				{Kind: engine.BlockerPrefill, Request: 42, Start: at(10), End: at(300)},
				{Kind: engine.BlockerLockWait, Start: at(0), End: at(10)},
			},
			[]latency.Blocker{
				{Kind: latency.BlockerPrefill, Request: 42, Start: at(10), End: at(300)},
				{Kind: latency.BlockerLockWait, Start: at(0), End: at(10)},
			},
		},
		{
			"full, unknown kind",
			[]engine.Blocker{
				{Kind: engine.BlockerPrefill, Request: 1}, {Kind: engine.BlockerPrefill, Request: 2},
				{Kind: engine.BlockerPrefill, Request: 3}, {Kind: 99, Request: 4},
			},
			[]latency.Blocker{
				{Kind: latency.BlockerPrefill, Request: 1}, {Kind: latency.BlockerPrefill, Request: 2},
				{Kind: latency.BlockerPrefill, Request: 3}, {Kind: 0, Request: 4},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tok engine.Token
			tok.NumBlockers = copy(tok.Blockers[:], tc.in)
			x := &exchange{}
			if d := cmp.Diff(tc.want, x.tokenBlockers(&tok)); d != "" {
				t.Errorf("blockers (-want +got):\n%s", d)
			}
			if n := testing.AllocsPerRun(100, func() { x.tokenBlockers(&tok) }); n != 0 {
				t.Errorf("%v allocations per token", n)
			}
		})
	}
}
