package engine

import "github.com/kiln-ai/kiln/internal/timing"

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
