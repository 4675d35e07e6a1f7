package server

import (
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// tokenBlockers converts the token's blockers into the exchange's reused
// array (no allocation per token); the slice is valid until the next
// token.
func (x *exchange) tokenBlockers(tok *engine.Token) []latency.Blocker {
	n := min(max(tok.NumBlockers, 0), len(x.blockers))
	for i, b := range tok.Blockers[:n] {
		x.blockers[i] = latency.Blocker{Kind: blockerKind(b.Kind), Request: b.Request, Start: b.Start, End: b.End}
	}
	return x.blockers[:n]
}

// blockerKind maps the engine's blocker kinds to the latency core's.
func blockerKind(k engine.BlockerKind) latency.BlockerKind {
	switch k {
	case engine.BlockerPrefill:
		return latency.BlockerPrefill
	case engine.BlockerLockWait:
		return latency.BlockerLockWait
	}
	return 0
}
