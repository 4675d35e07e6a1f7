package engine

import "github.com/kiln-ai/kiln/internal/timing"

// Snapshot is the engine's runtime state for health and metrics: a plain
// copy, consistent as of the end of the actor's latest cycle (QueueDepth is
// read live). It is defined in internal/timing so that telemetry reads the
// same struct (telemetry.EngineStats) without importing the engine.
type Snapshot = timing.EngineSnapshot

// The prefix cache's per-request outcome and its closed sets
// (internal/timing/prefix.go).
type (
	PrefixUse        = timing.PrefixUse
	PrefixSource     = timing.PrefixSource
	PrefixStop       = timing.PrefixStop
	PrefixEvict      = timing.PrefixEvict
	PrefixCacheStats = timing.PrefixCacheStats
)

// The stop and eviction reasons the engine names.
const (
	PrefixStopOff       = timing.PrefixStopOff
	PrefixEvictCapacity = timing.PrefixEvictCapacity
	PrefixEvictResize   = timing.PrefixEvictResize
)
