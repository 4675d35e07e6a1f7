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
	kind     string
	sc       trace.SpanContext
	from, to time.Time
	gen      uint64 // MaintenanceOp.gen that owns this slot
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
// LinkKindTrim, ...) whose span is sc, running from the engine-clock
// instant from until End narrows it: a lock-wait blocker of a stalled gap
// that overlaps it links the stall span to sc.
func (t *Telemetry) BeginMaintenance(kind string, sc trace.SpanContext, from time.Time) MaintenanceOp {
	g := t.maint
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	g.ops[g.n%recentMaintenance] = maintOp{kind: kind, sc: sc, from: from, gen: g.n}
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

// overlapping calls f for every registered operation whose interval
// overlaps [start, end].
func (g *maintRegistry) overlapping(start, end time.Time, f func(kind string, sc trace.SpanContext)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.ops {
		op := &g.ops[i]
		if op.gen == 0 || op.from.After(end) || (!op.to.IsZero() && op.to.Before(start)) {
			continue
		}
		f(op.kind, op.sc)
	}
}

// maintenanceLinks appends to links one link per maintenance operation
// overlapping the lock-wait blocker b, not already linked.
func (t *Telemetry) maintenanceLinks(links []trace.Link, b latency.Blocker, received time.Time) []trace.Link {
	t.maint.overlapping(b.Start, b.End, func(kind string, sc trace.SpanContext) {
		for _, l := range links {
			if l.SpanContext.Equal(sc) {
				return
			}
		}
		links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
			attribute.String(AttrLinkKind, kind),
			attribute.Float64(AttrBlockerStartOffsetMs, timing.Ms(b.Start.Sub(received))),
			attribute.Float64(AttrBlockerDurationMs, timing.Ms(b.Duration())),
		}})
	})
	return links
}
