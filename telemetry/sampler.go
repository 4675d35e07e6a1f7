package telemetry

import (
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// recordAll wraps the export sampler so that every span is at least
// recorded: the Kiln processor then sees 100% of requests (metrics cover
// everything), while only spans the wrapped sampler samples are exported
// (batch span processors skip unsampled spans).
type recordAll struct{ export sdktrace.Sampler }

var _ sdktrace.Sampler = recordAll{}

func (s recordAll) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	r := s.export.ShouldSample(p)
	if r.Decision == sdktrace.Drop {
		r.Decision = sdktrace.RecordOnly
	}
	return r
}

func (s recordAll) Description() string { return "KilnRecordAll{" + s.export.Description() + "}" }

// exportSampler builds the OTEL_TRACES_SAMPLER sampler of cfg.
func exportSampler(cfg Config) sdktrace.Sampler {
	ratio := sdktrace.TraceIDRatioBased(cfg.SamplerArg)
	switch cfg.Sampler {
	case SamplerAlwaysOn:
		return sdktrace.AlwaysSample()
	case SamplerAlwaysOff:
		return sdktrace.NeverSample()
	case SamplerTraceIDRatio:
		return ratio
	case SamplerParentBasedAlwaysOff:
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case SamplerParentBasedTraceIDRate:
		return sdktrace.ParentBased(ratio)
	default: // "", parentbased_always_on
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
}
