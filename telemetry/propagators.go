package telemetry

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// DefaultPropagators is the OpenTelemetry default of OTEL_PROPAGATORS.
const DefaultPropagators = "tracecontext,baggage"

// NewPropagator builds the propagator named by an OTEL_PROPAGATORS value:
// a comma-separated list of tracecontext (W3C traceparent), baggage (W3C
// baggage) and none (propagate nothing; it must then be alone). Empty
// means DefaultPropagators. Other names of the specification (b3,
// b3multi, jaeger, xray, ottrace) are refused rather than silently
// ignored: the request's trace would not join the caller's.
func NewPropagator(spec string) (propagation.TextMapPropagator, error) {
	if strings.TrimSpace(spec) == "" {
		spec = DefaultPropagators
	}
	var ps []propagation.TextMapPropagator
	seen := map[string]bool{}
	for name := range strings.SplitSeq(spec, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		switch name {
		case "tracecontext":
			ps = append(ps, propagation.TraceContext{})
		case "baggage":
			ps = append(ps, propagation.Baggage{})
		case "none":
		default:
			return nil, fmt.Errorf("%w: OTEL_PROPAGATORS %q: %q is not supported (use tracecontext, baggage or none)", ErrInvalidConfig, spec, name)
		}
	}
	if seen["none"] && len(seen) > 1 {
		return nil, fmt.Errorf("%w: OTEL_PROPAGATORS %q: none cannot be combined with other propagators", ErrInvalidConfig, spec)
	}
	return propagation.NewCompositeTextMapPropagator(ps...), nil
}
