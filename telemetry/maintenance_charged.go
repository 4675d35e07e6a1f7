package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// chargedKinds maps the barrier phases a request can be charged at
// admission (MAINTENANCE.md section 4) to the link kind of the operations
// that cause them.
var chargedKinds = [...]struct {
	phase latency.Phase
	kind  string
}{
	{latency.PhaseAdapter, LinkKindAdapter},
}

// chargedLinks returns the links from a request's chat span to the barrier
// operations it was charged for ("blocked by what"): for each barrier
// phase with a value in s, every registered operation of that kind whose
// interval overlapped the request's wait for admission (info.Submitted to
// info.Admitted). None without both instants.
func (t *Telemetry) chargedLinks(s *latency.Summary, info EndInfo) []trace.Link {
	if info.Submitted.IsZero() || info.Admitted.IsZero() {
		return nil
	}
	var links []trace.Link
	for _, c := range chargedKinds {
		if !s.Phases[c.phase].Valid {
			continue
		}
		t.maint.overlapping(info.Submitted, info.Admitted, func(kind string, sc trace.SpanContext) {
			if kind != c.kind {
				return
			}
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
				attribute.String(AttrLinkKind, kind),
			}})
		})
	}
	return links
}
