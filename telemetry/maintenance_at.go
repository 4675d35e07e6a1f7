package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// StartMaintenanceSpanAt is StartMaintenanceSpan for an operation that
// began at start, before the span could be made: an adapter swap starts
// its span when it runs at the barrier, covering from its queueing.
func (t *Telemetry) StartMaintenanceSpanAt(ctx context.Context, name string, start time.Time, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
}
