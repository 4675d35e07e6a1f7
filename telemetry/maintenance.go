package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Maintenance span names (MAINTENANCE.md section 9): each operation is a
// span in its own trace.
const (
	SpanTrim = "kiln.trim"
)

// Attributes of the kiln.trim span.
const (
	AttrTrimOutcome        = "kiln.trim.outcome" // "reclaimed" or "zero_yield"
	AttrTrimReclaimedBytes = "kiln.trim.reclaimed_bytes"
	AttrTrimBackendBytes   = "kiln.trim.backend_bytes"
	AttrTrimRSSBefore      = "kiln.trim.rss_before_bytes"
	AttrTrimRSSAfter       = "kiln.trim.rss_after_bytes"
	AttrTrimDeferredMs     = "kiln.trim.deferred_ms"
	AttrMaintenanceReason  = "kiln.maintenance.reason" // "maintenance" (operator) or "automatic_memory_policy"
)

// StartMaintenanceSpan starts the span of one maintenance operation as the
// root of a new trace (it is nobody's child: the requests it delays link
// to it). The caller ends it.
func (t *Telemetry) StartMaintenanceSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}
