package telemetry

import "time"

// EngineStats mirrors engine.Snapshot as a plain struct, so telemetry does
// not import the engine (DESIGN.md layering). The server copies the fields
// in the function it passes to SetEngineSource; the engine families
// kiln_batching_engine_* read it at collection time.
type EngineStats struct {
	QueueDepth int // requests waiting for admission
	Active     int // requests admitted and generating
	Prefilling int // requests with prompt left to prefill

	BatchSizeLast int // rows of the last decode step
	BatchSizeMax  int

	ForwardLast  time.Duration // last batched forward step
	ForwardMax   time.Duration
	ForwardTotal time.Duration
	ForwardCount int64

	AdmissionLast  time.Duration
	AdmissionMax   time.Duration
	AdmissionTotal time.Duration
	AdmissionCount int64

	CycleIdleTotal time.Duration

	DeliveryBlocked      int64         // times the actor found a request channel full
	DeliveryBlockedTotal time.Duration // time spent blocked on full channels

	Evictions       int64 // consumers evicted after the delivery grace
	Cancellations   int64 // requests whose caller went away
	TokensGenerated int64
	Cycles          int64

	MaintenanceOps   int64         // resize, trim, adapter and training operations run
	MaintenanceTotal time.Duration // time they held exclusive ownership
}
