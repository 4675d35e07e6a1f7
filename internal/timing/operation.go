package timing

import "time"

// OpKind says what a maintenance operation does. Each kind but the
// training job holds device ownership (or the actor barrier) and so is
// charged to the requests it delays as the phase its Slot names.
type OpKind uint8

// Operation kinds.
const (
	OpTrim         OpKind = iota + 1 // memory returned to the operating system
	OpResize                         // the KV arena reallocated
	OpAdapterSwap                    // the loaded adapter changed
	OpTrainingStep                   // one optimizer step of a training job
	OpTrainingJob                    // a training job: its steps are its children
	numOpKinds
)

var opKindNames = [numOpKinds]string{"", "trim", "resize", "adapter_swap", "training_step", "training_job"}

// String returns the kind's contract name (the kiln.link.kind of a link
// to its span, the Maintenance panel's kind).
func (k OpKind) String() string {
	if k > 0 && k < numOpKinds {
		return opKindNames[k]
	}
	return "unknown"
}

// Slot is the phase a hold of this kind is charged as: trim, resize,
// adapter, training.
func (k OpKind) Slot() BackendPhase {
	switch k {
	case OpTrim:
		return BackendTrim
	case OpResize:
		return BackendResize
	case OpAdapterSwap:
		return BackendAdapter
	}
	return BackendTraining
}

// Outcomes every kind can end with; a trim ends "reclaimed" or
// "zero_yield" instead of "ok".
const (
	OutcomeOK        = "ok"
	OutcomeError     = "error"
	OutcomeCancelled = "cancelled"
)

// Operation is the record of one maintenance operation, created by the
// engine with its identity when the operation is asked for and completed
// as it runs. The engine hands it to an OperationObserver when it begins
// (ID, Kind, Reason, Parent, Queued and what is known of the details) and
// when it ends (everything); the observer must not keep the pointer past
// the call nor change the record.
type Operation struct {
	ID     uint64 // unique in the process, never 0
	Kind   OpKind
	Reason string // why it ran, from a closed set per kind ("maintenance", "automatic_memory_policy", "request", ...)
	Parent uint64 // a training step's job; 0 for the others

	Queued time.Time // asked for
	Start  time.Time // began holding the device (for a barrier operation: began applying, after the drain)
	End    time.Time // ended; zero while it runs
	Hold   time.Duration
	// Hold is the time it held device ownership exclusively: End - Start
	// for a whole hold, the sum of its slices for a sliced training step.

	Outcome string // OutcomeOK, OutcomeError, ...; empty while it runs
	Err     error  // why it failed

	Trim     TrimDetail
	Resize   ResizeDetail
	Swap     SwapDetail
	Training TrainingDetail
}

// TrimDetail is what a trim freed.
type TrimDetail struct {
	BackendBytes int64 // released by the backend's buffers
	PrefixBlocks int   // of which idle prefix cache entries (blocks) dropped
	HeapReleased int64 // Go heap returned to the operating system
	RSSBefore    int64 // resident set size (0 where unknown)
	RSSAfter     int64
}

// Freed is the memory the trim gave back.
func (d TrimDetail) Freed() int64 { return d.BackendBytes + d.HeapReleased }

// ResizeDetail is what a KV resize did: tokens are KV positions.
type ResizeDetail struct {
	FromTokens, RequestedTokens, ActualTokens int
	FromSlots, Slots                          int
	BytesBefore, BytesAfter, DroppedBytes     int64
	RSSBefore, RSSAfter                       int64
	Accepted                                  time.Time // the barrier accepted it: admission paused, the drain began
}

// Direction is grow, shrink or none.
func (d ResizeDetail) Direction() string {
	switch {
	case d.ActualTokens > d.FromTokens:
		return "grow"
	case d.ActualTokens < d.FromTokens:
		return "shrink"
	}
	return "none"
}

// BaseAdapter names the base model wherever an adapter name or revision
// is reported.
const BaseAdapter = "base"

// SwapDetail is an adapter swap: adapter names, "base" for the base model.
type SwapDetail struct {
	From, To string
	Revision string    // the sha256 of To's weights, "base" for the base model
	Accepted time.Time // the barrier accepted it: admission paused, the drain began
}

// TrainingDetail is a training step, or (Step 0) a training job.
type TrainingDetail struct {
	Job         string // the job's public id
	Type        string // "sft"
	Step, Steps int    // this step (1-based) of the job's Steps
	Epoch       int
	Epochs      int
	Tokens      int     // tokens of this step's example (of all examples, for a job)
	Loss        float64 // after the step; 0 while it runs
	Slices      int     // exclusive holds the step took
	SliceLimit  time.Duration
	Adapter     string // a job's output adapter, once written
	Status      string // a job's end state: completed, failed, cancelled
}

// OperationObserver receives the engine's operation records: telemetry
// turns each into its span, its entry among the recent operations, its log
// line and its counters. Calls come from the goroutine that runs the
// operation (the actor for trims and barrier mutations) and must not block.
type OperationObserver interface {
	OperationBegan(op *Operation)
	OperationEnded(op *Operation)
}

// NopObserver discards every record.
type NopObserver struct{}

// OperationBegan implements OperationObserver.
func (NopObserver) OperationBegan(*Operation) {}

// OperationEnded implements OperationObserver.
func (NopObserver) OperationEnded(*Operation) {}
