package telemetry

import (
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// recentMaintenance is how many maintenance operations stay resolvable as
// link targets of stall spans (the latest ones; an operation older than
// that no longer explains a gap still being reported).
const recentMaintenance = 64

// maintOp is one maintenance operation: its span and the engine-clock
// interval in which it held the device (to is zero while it may still run).
type maintOp struct {
	kind, reason     string
	outcome, summary string // set by Describe; empty while it runs
	sc               trace.SpanContext
	from, to         time.Time
	gen              uint64 // MaintenanceOp.gen that owns this slot
}

// maintRegistry is a fixed ring of recent maintenance operations. It is
// safe for concurrent use and allocates nothing per lookup.
type maintRegistry struct {
	mu  sync.Mutex
	ops [recentMaintenance]maintOp
	n   uint64 // operations ever begun
}

// MaintenanceOp is a handle on a registered maintenance operation.
type MaintenanceOp struct {
	g   *maintRegistry
	gen uint64
}

// BeginMaintenance registers a maintenance operation of kind (a link kind:
// LinkKindTrim, LinkKindResize, LinkKindAdapterSwap, LinkKindTrainingStep)
// done for reason (a closed set per kind: "maintenance",
// "automatic_memory_policy", ...) whose span is sc, running from the
// engine-clock instant from until End narrows it: a lock-wait blocker of a
// stalled gap that overlaps it links the stall span to sc, and a request
// charged the barrier phase of its kind (resize, adapter) whose wait for
// admission overlaps it links its chat span to sc. The dashboard lists it
// (RecentMaintenance).
func (t *Telemetry) BeginMaintenance(kind, reason string, sc trace.SpanContext, from time.Time) MaintenanceOp {
	g := t.maint
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	g.ops[g.n%recentMaintenance] = maintOp{kind: kind, reason: reason, sc: sc, from: from, gen: g.n}
	return MaintenanceOp{g: g, gen: g.n}
}

// End records the interval the operation actually held the device (engine
// clock); a zero start keeps the registered one. An operation that failed
// before running ends with start == end.
func (o MaintenanceOp) End(start, end time.Time) {
	if o.g == nil {
		return
	}
	o.g.mu.Lock()
	defer o.g.mu.Unlock()
	op := &o.g.ops[o.gen%recentMaintenance]
	if op.gen != o.gen {
		return // pushed out of the ring
	}
	if !start.IsZero() {
		op.from = start
	}
	op.to = end
}

// Describe records how the operation ended for the dashboard: outcome
// ("ok", "error", or a kind's own: "reclaimed", "zero_yield") and a short
// summary (sizes, never request content).
func (o MaintenanceOp) Describe(outcome, summary string) {
	if o.g == nil {
		return
	}
	o.g.mu.Lock()
	defer o.g.mu.Unlock()
	if op := &o.g.ops[o.gen%recentMaintenance]; op.gen == o.gen {
		op.outcome, op.summary = outcome, summary
	}
}

// overlapping calls f for every registered operation whose interval
// overlaps [start, end].
func (g *maintRegistry) overlapping(start, end time.Time, f func(op *maintOp)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.ops {
		op := &g.ops[i]
		if op.gen == 0 || op.from.After(end) || (!op.to.IsZero() && op.to.Before(start)) {
			continue
		}
		f(op)
	}
}

// maintenanceLinks appends to links one link per maintenance operation
// overlapping the lock-wait blocker b, not already linked.
func (t *Telemetry) maintenanceLinks(links []trace.Link, b latency.Blocker, received time.Time) []trace.Link {
	t.maint.overlapping(b.Start, b.End, func(op *maintOp) {
		for _, l := range links {
			if l.SpanContext.Equal(op.sc) {
				return
			}
		}
		links = append(links, trace.Link{SpanContext: op.sc, Attributes: []attribute.KeyValue{
			attribute.String(AttrLinkKind, op.kind),
			attribute.Float64(AttrBlockerStartOffsetMs, timing.Ms(b.Start.Sub(received))),
			attribute.Float64(AttrBlockerDurationMs, timing.Ms(b.Duration())),
		}})
	})
	return links
}

// barrierLinkKinds pairs each barrier phase (MAINTENANCE.md section 4)
// with the kind of the maintenance operation that charges it.
var barrierLinkKinds = [...]struct {
	phase latency.Phase
	kind  string
}{{latency.PhaseResize, LinkKindResize}, {latency.PhaseAdapter, LinkKindAdapterSwap}}

// linkBarriers links the chat span to every registered operation of a
// barrier kind the request was charged for (its phase total is not null)
// whose interval overlaps the request's wait for admission [from, to]: a
// request queued behind a resize links to its kiln.resize span, one queued
// behind an adapter swap to its kiln.adapter_swap span. Whoever runs the
// operation registers it with BeginMaintenance and narrows it with End; no
// other call is needed.
func (r *Request) linkBarriers(s *latency.Summary, from, to time.Time) {
	if !r.span.IsRecording() {
		return
	}
	received := r.tr.Received()
	for _, b := range barrierLinkKinds {
		if !s.Phases[b.phase].Valid {
			continue
		}
		r.t.maint.overlapping(from, to, func(op *maintOp) {
			if op.kind != b.kind {
				return
			}
			end := op.to
			if end.IsZero() {
				end = to
			}
			r.span.AddLink(trace.Link{SpanContext: op.sc, Attributes: []attribute.KeyValue{
				attribute.String(AttrLinkKind, op.kind),
				attribute.Float64(AttrBlockerStartOffsetMs, timing.Ms(op.from.Sub(received))),
				attribute.Float64(AttrBlockerDurationMs, timing.Ms(timing.Elapsed(op.from, end))),
			}})
		})
	}
}
