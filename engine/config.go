package engine

import (
	"fmt"
	"time"
)

// Config sizes the actor's queues and budgets. A zero field takes its
// default (DefaultConfig, or the backend's size for MaxBatch and KVBudget);
// a negative one is invalid. The keys in Validate's errors are the snake_case
// field names that cmd/kiln maps to flags and KILN_* variables.
type Config struct {
	// QueueDepth bounds the requests waiting for admission; a Submit beyond
	// it fails with ErrQueueFull (the server's 429).
	QueueDepth int
	// MaxBatch bounds the requests active at once (prefilling or decoding);
	// at most the backend's slots. Zero means all slots.
	MaxBatch int
	// KVBudget bounds the KV positions reserved by active requests, in
	// tokens; a request reserves min(len(prompt)+MaxTokens, SeqLen). Zero
	// means slots x SeqLen. It must hold one full context. Engine.ResizeKV
	// changes the live budget (and the slots); Config keeps the start-up
	// value.
	KVBudget int
	// KVMaxTokens bounds the KV budget a resize may ask for (ResizeKV).
	// Zero means the tokens whose KV caches fit in half of the physical
	// memory, and never below KVBudget.
	KVMaxTokens int
	// PrefillChunk is the number of prompt tokens prefilled per cycle (over
	// all prefilling requests), so a long prompt delays decoding requests by
	// at most one chunk per cycle.
	PrefillChunk int
	// DeliveryBuffer is the capacity of each request's token channel.
	DeliveryBuffer int
	// EvictGrace is how long a request may stay blocked on a full channel
	// (its consumer not reading) before it is evicted.
	EvictGrace time.Duration
	// CycleIdle is an optional cooperative pause after every cycle that
	// advanced work (actor_cycle_idle); zero means none.
	CycleIdle time.Duration
	// PrefixCacheOff turns automatic prefix caching off; it is on by
	// default (engine/llama/prefix.go).
	PrefixCacheOff bool
	// PrefixCacheBytes bounds the KV bytes the prefix cache keeps for
	// prompts that no active request uses; the free KV budget bounds them
	// too. Zero means the free KV budget alone.
	PrefixCacheBytes int64
}

// Defaults of the fields that do not depend on the backend.
const (
	DefaultQueueDepth     = 256
	DefaultPrefillChunk   = 128
	DefaultDeliveryBuffer = 64
	DefaultEvictGrace     = 10 * time.Second
)

// DefaultConfig returns the defaults; MaxBatch and KVBudget stay zero and
// follow the backend.
func DefaultConfig() Config {
	return Config{
		QueueDepth:     DefaultQueueDepth,
		PrefillChunk:   DefaultPrefillChunk,
		DeliveryBuffer: DefaultDeliveryBuffer,
		EvictGrace:     DefaultEvictGrace,
	}
}

// Validate reports the first invalid field, naming its key.
func (c Config) Validate() error {
	ints := []struct {
		key string
		v   int
	}{
		{"queue_depth", c.QueueDepth},
		{"max_batch", c.MaxBatch},
		{"kv_budget", c.KVBudget},
		{"kv_max_tokens", c.KVMaxTokens},
		{"prefill_chunk", c.PrefillChunk},
		{"delivery_buffer", c.DeliveryBuffer},
	}
	for _, f := range ints {
		if f.v < 0 {
			return fmt.Errorf("engine config: %s must not be negative (got %d)", f.key, f.v)
		}
	}
	if c.PrefixCacheBytes < 0 {
		return fmt.Errorf("engine config: prefix_cache_bytes must not be negative (got %d)", c.PrefixCacheBytes)
	}
	durs := []struct {
		key string
		v   time.Duration
	}{
		{"evict_grace", c.EvictGrace},
		{"cycle_idle", c.CycleIdle},
	}
	for _, f := range durs {
		if f.v < 0 {
			return fmt.Errorf("engine config: %s must not be negative (got %s)", f.key, f.v)
		}
	}
	return nil
}

// resolve fills zero fields from the defaults and the backend and checks
// the fields against the backend's sizes.
func (c Config) resolve(b Backend) (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	d := DefaultConfig()
	if c.QueueDepth == 0 {
		c.QueueDepth = d.QueueDepth
	}
	if c.PrefillChunk == 0 {
		c.PrefillChunk = d.PrefillChunk
	}
	if c.DeliveryBuffer == 0 {
		c.DeliveryBuffer = d.DeliveryBuffer
	}
	if c.EvictGrace == 0 {
		c.EvictGrace = d.EvictGrace
	}
	slots, seq := b.Slots(), b.SeqLen()
	if slots <= 0 || seq <= 0 || b.VocabSize() <= 0 {
		return c, fmt.Errorf("engine: backend has no capacity (slots %d, seq_len %d, vocab %d)", slots, seq, b.VocabSize())
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = slots
	}
	if c.MaxBatch > slots {
		return c, fmt.Errorf("engine config: max_batch %d exceeds the backend's %d slots", c.MaxBatch, slots)
	}
	if c.KVBudget == 0 {
		c.KVBudget = slots * seq
	}
	if c.KVBudget < seq {
		return c, fmt.Errorf("engine config: kv_budget %d is below one context (%d tokens)", c.KVBudget, seq)
	}
	if c.KVMaxTokens != 0 && c.KVMaxTokens < c.KVBudget {
		return c, fmt.Errorf("engine config: kv_max_tokens %d is below kv_budget %d", c.KVMaxTokens, c.KVBudget)
	}
	return c, nil
}
