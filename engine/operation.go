package engine

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Operation is the record of one maintenance operation (timing.Operation):
// the engine gives each trim, KV resize, adapter swap and training step its
// identity when it is asked for, fills the record as it runs and hands it
// to the engine's OperationObserver when it begins and when it ends.
type Operation = timing.Operation

// WithObserver sends the engine's operation records to o (telemetry turns
// them into spans, log lines and counters). Without it they are dropped.
func WithObserver(o timing.OperationObserver) Option {
	return func(e *Engine) {
		if o != nil {
			e.obs = o
		}
	}
}

// BeginOperation creates the record of an operation of kind asked for now
// for reason (parent: a training step's job, else 0), with a fresh
// identity, and reports its beginning to the observer. detail, when not
// nil, fills what is known of it first. The caller ends it with
// EndOperation; an engine method that runs the operation (Trim, ResizeKV,
// SwapAdapter) makes and ends its own.
func (e *Engine) BeginOperation(kind timing.OpKind, reason string, parent uint64, detail func(*Operation)) *Operation {
	op := &Operation{ID: e.opSeq.Add(1), Kind: kind, Reason: reason, Parent: parent, Queued: e.clock.Now()}
	if detail != nil {
		detail(op)
	}
	e.obs.OperationBegan(op)
	return op
}

// EndOperation ends op now with err (nil: outcome ok, unless the caller
// set another outcome) and reports it to the observer. A second call does
// nothing.
func (e *Engine) EndOperation(op *Operation, err error) {
	if op == nil || !op.End.IsZero() {
		return
	}
	e.endOperationAt(op, e.clock.Now(), err)
}

// endOperationAt is EndOperation at the instant end.
func (e *Engine) endOperationAt(op *Operation, end time.Time, err error) {
	op.End = end
	if op.Start.IsZero() {
		op.Start = end // it never held the device
	}
	switch {
	case err != nil:
		op.Err = err
		op.Outcome = timing.OutcomeError
	case op.Outcome == "":
		op.Outcome = timing.OutcomeOK
	}
	e.obs.OperationEnded(op)
}
