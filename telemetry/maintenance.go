package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// StartMaintenanceSpan starts the span of one maintenance operation as the
// root of a new trace (it is nobody's child: the requests it delays link
// to it). The caller ends it.
func (t *Telemetry) StartMaintenanceSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}
