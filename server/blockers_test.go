package server

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// TestTokenBlockers: the engine's blockers reach telemetry with kinds,
// identities and instants unchanged, aliasing the token's array (no
// allocation per token), whatever NumBlockers claims.
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
			"full",
			[]engine.Blocker{
				{Kind: engine.BlockerPrefill, Request: 1}, {Kind: engine.BlockerPrefill, Request: 2},
				{Kind: engine.BlockerPrefill, Request: 3}, {Kind: engine.BlockerLockWait, Request: 4},
			},
			[]latency.Blocker{
				{Kind: latency.BlockerPrefill, Request: 1}, {Kind: latency.BlockerPrefill, Request: 2},
				{Kind: latency.BlockerPrefill, Request: 3}, {Kind: latency.BlockerLockWait, Request: 4},
			},
		},
	}
	t.Run("count out of range", func(t *testing.T) {
		var tok engine.Token
		for _, n := range []int{-1, len(tok.Blockers) + 5} {
			tok.NumBlockers = n
			if got := len(tokenBlockers(&tok)); got != min(max(n, 0), len(tok.Blockers)) {
				t.Errorf("NumBlockers %d: %d blockers", n, got)
			}
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tok engine.Token
			tok.NumBlockers = copy(tok.Blockers[:], tc.in)
			if d := cmp.Diff(tc.want, tokenBlockers(&tok)); d != "" {
				t.Errorf("blockers (-want +got):\n%s", d)
			}
			if n := testing.AllocsPerRun(100, func() { tokenBlockers(&tok) }); n != 0 {
				t.Errorf("%v allocations per token", n)
			}
		})
	}
}
