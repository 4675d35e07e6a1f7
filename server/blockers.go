package server

import (
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// tokenBlockers is the token's list of blockers, aliasing its fixed array
// (no allocation per token): engine.Blocker and latency.Blocker are one type
// (internal/timing), so nothing is translated.
func tokenBlockers(tok *engine.Token) []latency.Blocker {
	return tok.Blockers[:min(max(tok.NumBlockers, 0), len(tok.Blockers))]
}
