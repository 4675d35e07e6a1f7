package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// StartMaintenanceSpan starts the span of one maintenance operation as the
// root of a new trace (it is nobody's child: the requests it delays link
// to it). The caller ends it.
func (t *Telemetry) StartMaintenanceSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.StartMaintenanceSpanAt(ctx, name, time.Time{}, attrs...)
}

// StartMaintenanceSpanAt is StartMaintenanceSpan for an operation that
// began at start, before the span could be made: an adapter swap starts
// its span when it runs at the barrier, covering from its queueing. A zero
// start is now (the SDK's default timestamp).
func (t *Telemetry) StartMaintenanceSpanAt(ctx context.Context, name string, start time.Time, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
}
