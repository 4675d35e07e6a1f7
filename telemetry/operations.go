package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/internal/timing"
)

// The engine's maintenance operations (timing.Operation records) become,
// here and nowhere else, a span (a root span, or a training step's child
// of its job's), an entry among the recent operations (the dashboard's
// Maintenance panel, and what stall spans and diagnosis records resolve
// operation identities with), a log line and their counters. Telemetry
// implements timing.OperationObserver; cmd/kiln gives it to the engine.

// recentMaintenance is how many operations other than training steps stay
// listed and resolvable, and recentSteps how many training steps (a job's
// steps are one row of the panel, so a long job does not push every other
// operation out).
const (
	recentMaintenance = 64
	recentSteps       = 64
)

// maintOp is one registered operation.
type maintOp struct {
	id, parent       uint64
	kind             timing.OpKind
	reason           string
	outcome, summary string // empty while it runs
	sc               trace.SpanContext
	span             trace.Span // set while it runs
	queued           time.Time
	from, to         time.Time // its hold of the device (to zero while it runs)
	hold             time.Duration
	steps            int // a job's steps ended
}

// opRing is a fixed ring of operations in the order they began.
type opRing struct {
	ops []maintOp
	n   uint64 // operations ever added
}

func (r *opRing) add(op maintOp) *maintOp {
	p := &r.ops[r.n%uint64(len(r.ops))]
	*p = op
	r.n++
	return p
}

// find returns the operation id, or nil once it left the ring.
func (r *opRing) find(id uint64) *maintOp {
	for i := range r.ops {
		if r.ops[i].id == id && id != 0 {
			return &r.ops[i]
		}
	}
	return nil
}

// maintRegistry is the recent operations. It is safe for concurrent use.
type maintRegistry struct {
	mu    sync.Mutex
	ops   opRing // every kind but training steps
	steps opRing
}

func newMaintRegistry() *maintRegistry {
	return &maintRegistry{ops: opRing{ops: make([]maintOp, recentMaintenance)}, steps: opRing{ops: make([]maintOp, recentSteps)}}
}

// ring is where operations of kind k are kept.
func (g *maintRegistry) ring(k timing.OpKind) *opRing {
	if k == timing.OpTrainingStep {
		return &g.steps
	}
	return &g.ops
}

// find returns the operation id of either ring; g.mu is held.
func (g *maintRegistry) find(id uint64) *maintOp {
	if op := g.ops.find(id); op != nil {
		return op
	}
	return g.steps.find(id)
}

// OperationBegan implements timing.OperationObserver: the operation's
// span starts at its queueing, a training step's as its job's child, and
// the operation is registered so that stall spans and diagnosis records
// can name it while it runs.
func (t *Telemetry) OperationBegan(op *timing.Operation) {
	g := t.maint
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, opts := context.Background(), []trace.SpanStartOption{trace.WithNewRoot()}
	if p := g.find(op.Parent); op.Parent != 0 && p != nil {
		ctx, opts = trace.ContextWithSpanContext(ctx, p.sc), nil
	}
	opts = append(opts, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(op.Queued),
		trace.WithAttributes(beganAttrs(op)...))
	_, span := t.tracer.Start(ctx, opSpanName(op.Kind), opts...)
	g.ring(op.Kind).add(maintOp{id: op.ID, parent: op.Parent, kind: op.Kind, reason: op.Reason,
		sc: span.SpanContext(), span: span, queued: op.Queued, from: op.Queued})
}

// OperationEnded implements timing.OperationObserver: the span ends with
// the operation's results, the registry keeps its interval, outcome and
// summary, and the operation is logged and counted.
func (t *Telemetry) OperationEnded(op *timing.Operation) {
	summary := Describe(op)
	g := t.maint
	g.mu.Lock()
	m := g.find(op.ID)
	var span trace.Span
	if m != nil {
		span, m.span = m.span, nil
		m.to, m.outcome, m.summary = op.End, op.Outcome, summary
		if op.Kind != timing.OpTrainingJob {
			m.from, m.hold = op.Start, op.Hold // a job runs from its queueing; its hold is its steps'
		}
		if p := g.find(op.Parent); op.Kind == timing.OpTrainingStep && p != nil {
			p.steps++
			p.hold += op.Hold
			p.summary = summary
		}
	}
	g.mu.Unlock()
	if span != nil {
		span.SetAttributes(endedAttrs(op)...)
		if op.Err != nil {
			span.SetStatus(codes.Error, op.Err.Error())
		}
		span.End(trace.WithTimestamp(op.End))
	}
	t.logOperation(op, summary)
	ok := op.Err == nil && op.Outcome == timing.OutcomeOK
	if op.Kind == timing.OpAdapterSwap && ok {
		t.SetActiveAdapter(op.Swap.Revision != timing.BaseAdapter, op.Swap.Revision)
	}
	if op.Kind == timing.OpResize && ok {
		if err := t.CountKVResize(op.Reason, op.Resize.Direction()); err != nil {
			t.log.Error().Err(err).Msg("kv resize not counted")
		}
	}
}

// operationLink returns the span context and kind of operation id, if it
// is still registered.
func (t *Telemetry) operationLink(id uint64) (trace.SpanContext, timing.OpKind, bool) {
	g := t.maint
	g.mu.Lock()
	defer g.mu.Unlock()
	if op := g.find(id); op != nil {
		return op.sc, op.kind, true
	}
	return trace.SpanContext{}, 0, false
}

// opSpanName is the span of an operation kind.
func opSpanName(k timing.OpKind) string {
	switch k {
	case timing.OpTrim:
		return SpanTrim
	case timing.OpResize:
		return SpanResize
	case timing.OpAdapterSwap:
		return SpanAdapterSwap
	case timing.OpTrainingJob:
		return SpanTrainingJob
	}
	return SpanTrainingStep
}

// beganAttrs are an operation's span attributes known when it begins.
func beganAttrs(op *timing.Operation) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String(AttrMaintenanceReason, op.Reason), attribute.Int64(AttrOperationID, int64(op.ID))}
	tr := &op.Training
	switch op.Kind {
	case timing.OpResize:
		attrs = append(attrs, attribute.Int(AttrResizeRequestedTokens, op.Resize.RequestedTokens))
	case timing.OpAdapterSwap:
		attrs = append(attrs, attribute.String(AttrAdapterTo, op.Swap.To), attribute.String(AttrAdapterRevision, op.Swap.Revision))
	case timing.OpTrainingJob:
		attrs = append(attrs, attribute.String(AttrTrainingJobID, tr.Job), attribute.String(AttrTrainingType, tr.Type),
			attribute.Int(AttrTrainingTotalSteps, tr.Steps), attribute.Int(AttrTrainingTokens, tr.Tokens))
	case timing.OpTrainingStep:
		attrs = append(attrs, attribute.String(AttrTrainingJobID, tr.Job), attribute.Int(AttrTrainingStep, tr.Step),
			attribute.Int(AttrTrainingEpoch, tr.Epoch), attribute.Int(AttrTrainingTokens, tr.Tokens))
	}
	return attrs
}

// endedAttrs are an operation's results.
func endedAttrs(op *timing.Operation) []attribute.KeyValue {
	holdMs := attribute.Float64(AttrOperationHoldMs, timing.Ms(op.Hold))
	switch op.Kind {
	case timing.OpTrim:
		d := &op.Trim
		return []attribute.KeyValue{holdMs, attribute.String(AttrTrimOutcome, op.Outcome),
			attribute.Int64(AttrTrimReclaimedBytes, d.Freed()), attribute.Int64(AttrTrimBackendBytes, d.BackendBytes),
			attribute.Int64(AttrTrimRSSBefore, d.RSSBefore), attribute.Int64(AttrTrimRSSAfter, d.RSSAfter),
			attribute.Float64(AttrTrimDeferredMs, timing.Ms(timing.Elapsed(op.Queued, op.Start)))}
	case timing.OpResize:
		d := &op.Resize
		return []attribute.KeyValue{holdMs, attribute.Int(AttrResizeFromTokens, d.FromTokens),
			attribute.Int(AttrResizeActualTokens, d.ActualTokens), attribute.String(AttrResizeDirection, d.Direction()),
			attribute.Int64(AttrResizeBytesBefore, d.BytesBefore), attribute.Int64(AttrResizeBytesAfter, d.BytesAfter),
			attribute.Int64(AttrResizeRSSBefore, d.RSSBefore), attribute.Int64(AttrResizeRSSAfter, d.RSSAfter),
			attribute.Float64(AttrResizeDrainMs, timing.Ms(timing.Elapsed(d.Accepted, op.Start)))}
	case timing.OpAdapterSwap:
		return []attribute.KeyValue{holdMs, attribute.String(AttrAdapterFrom, op.Swap.From),
			attribute.Float64(AttrAdapterWaitMs, timing.Ms(timing.Elapsed(op.Queued, op.Start))),
			attribute.Float64(AttrAdapterApplyMs, timing.Ms(op.Hold))}
	case timing.OpTrainingJob:
		return []attribute.KeyValue{attribute.String(AttrTrainingStatus, op.Training.Status)}
	}
	return []attribute.KeyValue{holdMs, attribute.Float64(AttrTrainingLoss, op.Training.Loss),
		attribute.Int(AttrTrainingSlices, op.Training.Slices)}
}
