package telemetry

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/kiln-ai/kiln/internal/timing"
)

// The prefix cache's families (docs/latency-guide.md#the-prefix-cache),
// read from the engine's snapshot (timing.EngineSnapshot.PrefixCache) at collection
// like the other engine families. Every label takes its values from a
// closed set and every series exists from the start at 0.
const (
	// MetricPrefixCacheQueriedTokens counts the prompt tokens looked up
	// in the cache, MetricPrefixCacheHitTokens those reused (not
	// prefilled): their ratio is the token hit rate.
	MetricPrefixCacheQueriedTokens = "kiln_prefix_cache_queried_tokens_total"
	MetricPrefixCacheHitTokens     = "kiln_prefix_cache_hit_tokens_total"
	// MetricPrefixCacheLookups counts the prompts looked up,
	// MetricPrefixCacheHits those that reused at least one token.
	MetricPrefixCacheLookups = "kiln_prefix_cache_lookups_total"
	MetricPrefixCacheHits    = "kiln_prefix_cache_hits_total"
	// MetricPrefixCacheEvictions and MetricPrefixCacheEvictedBytes count
	// the entries dropped and their KV bytes, by LabelReason (the closed
	// set PrefixEvictReasons).
	MetricPrefixCacheEvictions    = "kiln_prefix_cache_evictions_total"
	MetricPrefixCacheEvictedBytes = "kiln_prefix_cache_evicted_bytes_total"
	// MetricPrefixCacheBytes is the KV bytes the cache holds, by
	// LabelPrefixCacheState: in_use (blocks an active request shares)
	// and idle (blocks no active request uses: evictable). The sum over
	// state is the bytes held.
	MetricPrefixCacheBytes = "kiln_prefix_cache_bytes"
	// MetricPrefixCacheLimitBytes is the bound now: the configured bytes,
	// or less when the free KV budget is smaller (0 with the cache off).
	MetricPrefixCacheLimitBytes = "kiln_prefix_cache_limit_bytes"
	// MetricPrefixCacheBlocks is the cached blocks.
	MetricPrefixCacheBlocks = "kiln_prefix_cache_blocks"
	// MetricPrefixCacheEnabled is 1 while the cache is on, 0 while off.
	MetricPrefixCacheEnabled = "kiln_prefix_cache_enabled"
)

// LabelPrefixCacheState is kiln_prefix_cache_bytes' label: one of
// PrefixCacheStateInUse and PrefixCacheStateIdle.
const LabelPrefixCacheState = "state"

// The closed set of LabelPrefixCacheState.
const (
	PrefixCacheStateInUse = "in_use"
	PrefixCacheStateIdle  = "idle"
)

// PrefixEvictReasons returns the closed set of the eviction families'
// reason label (timing.PrefixEvict's label values, in its order), as a
// fresh slice.
func PrefixEvictReasons() []string {
	out := make([]string, timing.NumPrefixEvicts)
	for r := range timing.NumPrefixEvicts {
		out[r] = r.String()
	}
	return out
}

// Instrument names of the prefix cache's counters: the exporter adds
// _total, giving the Metric* names above.
const (
	instPrefixQueriedTokens = "kiln_prefix_cache_queried_tokens"
	instPrefixHitTokens     = "kiln_prefix_cache_hit_tokens"
	instPrefixLookups       = "kiln_prefix_cache_lookups"
	instPrefixHits          = "kiln_prefix_cache_hits"
	instPrefixEvictions     = "kiln_prefix_cache_evictions"
	instPrefixEvictedBytes  = "kiln_prefix_cache_evicted_bytes"
)

// prefixCacheFamilies are the engine families of the prefix cache. The
// byte families carry no unit: "_bytes" is part of the name, as in
// kiln_memory_reclaimed_bytes.
func prefixCacheFamilies() []engineFamily {
	fs := []engineFamily{
		{name: instPrefixQueriedTokens, desc: "Prompt tokens looked up in the prefix cache.", counter: true,
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.QueriedTokens) }},
		{name: instPrefixHitTokens, desc: "Prompt tokens reused from the prefix cache (not prefilled).", counter: true,
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.HitTokens) }},
		{name: instPrefixLookups, desc: "Prompts looked up in the prefix cache.", counter: true,
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.Lookups) }},
		{name: instPrefixHits, desc: "Prefix cache lookups that reused at least one token.", counter: true,
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.Hits) }},
	}
	for r := range timing.NumPrefixEvicts {
		fs = append(fs, engineFamily{name: instPrefixEvictions, desc: "Prefix cache entries evicted, by reason.", counter: true,
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.Evictions[r]) }, attr: attribute.String(LabelReason, r.String())})
	}
	for r := range timing.NumPrefixEvicts {
		fs = append(fs, engineFamily{name: instPrefixEvictedBytes, desc: "KV bytes of the prefix cache entries evicted, by reason.", counter: true,
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.EvictedBytes[r]) }, attr: attribute.String(LabelReason, r.String())})
	}
	const bytesDesc = "KV bytes the prefix cache holds: in_use, shared with an active request; idle, used by none (evictable)."
	return append(fs,
		engineFamily{name: MetricPrefixCacheBytes, desc: bytesDesc,
			v: func(s *timing.EngineSnapshot) float64 {
				return float64(max(0, s.PrefixCache.Bytes-s.PrefixCache.IdleBytes))
			},
			attr: attribute.String(LabelPrefixCacheState, PrefixCacheStateInUse)},
		engineFamily{name: MetricPrefixCacheBytes, desc: bytesDesc,
			v:    func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.IdleBytes) },
			attr: attribute.String(LabelPrefixCacheState, PrefixCacheStateIdle)},
		engineFamily{name: MetricPrefixCacheLimitBytes, desc: "The prefix cache's byte bound now (the configured bytes, or less when the free KV budget is smaller).",
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.LimitBytes) }},
		engineFamily{name: MetricPrefixCacheBlocks, desc: "Blocks the prefix cache holds.",
			v: func(s *timing.EngineSnapshot) float64 { return float64(s.PrefixCache.Blocks) }},
		engineFamily{name: MetricPrefixCacheEnabled, desc: "1 while the prefix cache is on, 0 while it is off.",
			v: func(s *timing.EngineSnapshot) float64 { return b2f(s.PrefixCache.Enabled) }},
	)
}
