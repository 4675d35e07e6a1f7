package timing

// PrefixSource says where a request's reused prompt tokens came from.
type PrefixSource uint8

// The closed set of reuse sources (prefix_cache.source).
const (
	PrefixSourceNone       PrefixSource = iota // nothing reused: null in JSON
	PrefixSourceShared                         // KV blocks shared with other sequences (the radix tree)
	PrefixSourceSlot                           // the blocks the same slot's previous sequence left
	PrefixSourceCheckpoint                     // a recurrent-state checkpoint (hybrid models)
)

var prefixSourceNames = [...]string{"", "shared_prefix", "same_slot", "checkpoint"}

// String is the source's wire name; "" for PrefixSourceNone.
func (s PrefixSource) String() string {
	if int(s) < len(prefixSourceNames) {
		return prefixSourceNames[s]
	}
	return ""
}

// PrefixStop says why reuse of a prompt stopped where it did.
type PrefixStop uint8

// The closed set of stop reasons (prefix_cache.stop_reason).
const (
	PrefixStopOff          PrefixStop = iota // the cache is off
	PrefixStopPromptEnd                      // reused up to the prompt's last token (which is always computed)
	PrefixStopUncached                       // the cache held nothing past this token
	PrefixStopDiverged                       // the cache held a continuation that differs at this token
	PrefixStopEvicted                        // the continuation was cached once and evicted
	PrefixStopOtherAdapter                   // cached under another adapter or adapter revision only
	PrefixStopNoCheckpoint                   // a hybrid model: cached further, but no recurrent-state checkpoint past this token
	NumPrefixStops
)

var prefixStopNames = [...]string{"off", "prompt_end", "uncached", "diverged", "evicted", "other_adapter", "no_checkpoint"}

// String is the stop reason's wire name.
func (s PrefixStop) String() string {
	if int(s) < len(prefixStopNames) {
		return prefixStopNames[s]
	}
	return "off"
}

// PrefixUse is what one request's prompt took from the prefix cache.
type PrefixUse struct {
	Cached    int          // prompt tokens whose KV was reused, not prefilled
	Prefilled int          // prompt tokens prefilled (len(prompt) - Cached)
	Source    PrefixSource // where the reuse came from; None when Cached is 0
	Stop      PrefixStop   // why reuse stopped at token Cached
}

// PrefixEvict is why the cache dropped an entry.
type PrefixEvict uint8

// The closed set of eviction reasons (kiln_prefix_cache_evictions_total{reason}).
const (
	PrefixEvictCapacity   PrefixEvict = iota // least recently used, to fit the byte bound or the free KV budget
	PrefixEvictTrim                          // a trim freed the unreferenced entries
	PrefixEvictResize                        // a KV resize left less room than the cache held
	PrefixEvictSuperseded                    // its adapter's revision was replaced (training, reload)
	PrefixEvictSubsumed                      // a longer entry holds the same tokens
	NumPrefixEvicts
)

var prefixEvictNames = [...]string{"capacity", "trim", "resize", "superseded", "subsumed"}

// String is the eviction reason's label value.
func (r PrefixEvict) String() string {
	if int(r) < len(prefixEvictNames) {
		return prefixEvictNames[r]
	}
	return "capacity"
}

// PrefixCacheStats is the prefix cache's state and counters, read by the
// metrics and /v1/stats.
type PrefixCacheStats struct {
	Enabled    bool
	LimitBytes int64 // the bound now: the configured bytes, or less when the free KV budget is smaller
	Bytes      int64 // KV bytes of cached blocks, shared with active requests or not
	IdleBytes  int64 // of which no active request uses (evictable)
	Blocks     int   // cached blocks
	BlockLen   int   // positions per block

	Lookups       uint64 // prompts looked up
	Hits          uint64 // lookups that reused at least one token
	QueriedTokens uint64 // prompt tokens looked up
	HitTokens     uint64 // prompt tokens reused
	Evictions     [NumPrefixEvicts]uint64
	EvictedBytes  [NumPrefixEvicts]uint64
}
