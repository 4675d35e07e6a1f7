package timing

import "time"

// EngineSnapshot is the engine's runtime state for health and metrics: a plain
// copy, consistent as of the end of the actor's latest cycle (QueueDepth is
// read live).
type EngineSnapshot struct {
	Ready bool // started, not stopped, actor alive

	QueueDepth int // requests waiting for admission
	Active     int // admitted requests holding a slot (prefilling or decoding)
	Prefilling int // active requests whose prompt is not fully prefilled
	Draining   int // finished requests whose last token waits for the consumer

	KVReserved int // KV positions reserved by active requests
	KVBudget   int // KV positions admission may reserve (changed by a resize)
	KVSlots    int // sequences the KV arena holds (changed by a resize)
	BatchLimit int // requests that may be active at once (changed by a resize)

	// RecurrentBytes is the memory of a hybrid model's recurrent states
	// (Qwen3.5's Gated DeltaNet layers): the running sequences' and those
	// kept from finished ones. Recurrent says the model has such layers
	// (without them RecurrentBytes is 0 and reported as not applying).
	RecurrentBytes int64
	Recurrent      bool

	BatchLast, BatchMax int // rows of the latest and largest decode step
	PrefillLast         int // prompt tokens prefilled in the latest cycle that prefilled

	Forwards     uint64 // backend forward calls (prefill chunks and decode steps)
	ForwardLast  time.Duration
	ForwardMax   time.Duration
	ForwardTotal time.Duration

	Admissions     uint64 // admission segments that admitted at least one request
	AdmissionLast  time.Duration
	AdmissionMax   time.Duration
	AdmissionTotal time.Duration

	CycleIdleTotal time.Duration
	LockWaitTotal  time.Duration // the actor waiting for device ownership

	// Delivery backpressure: requests skipped because their channel was
	// full. Blocked is the number now; BlockedEvents counts the times a
	// request became blocked; BlockedTotal sums how long they stayed so.
	Blocked       int
	BlockedEvents uint64
	BlockedTotal  time.Duration

	// The actor barrier (docs/maintenance.md section 4): a resize or adapter
	// mutation accepted, from acceptance through drain to completion (read
	// live), and the mutations run.
	BarrierResize  bool
	BarrierAdapter bool
	Mutations      uint64
	// MutationsPending are the mutations queued and not yet accepted (read
	// live).
	MutationsPending int

	// Trims (memory reclaim): attempts that gave memory back and those
	// that found none, the bytes given back, the latest trim's duration.
	ReclaimReclaimed uint64
	ReclaimZeroYield uint64
	ReclaimedBytes   uint64
	ReclaimLast      time.Duration
	TrimsPending     int // trims asked for and not yet begun (read live)

	Admitted        uint64 // requests admitted
	Completed       uint64 // requests ended by stop or length
	Evictions       uint64
	Cancellations   uint64
	Errors          uint64 // requests ended by FinishError
	TokensGenerated uint64
	Cycles          uint64

	PrefixCache PrefixCacheStats // the prefix cache (engine/llama/prefix.go)
}
