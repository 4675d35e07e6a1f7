package telemetry

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// Observations are the request-level facts a `chat {model}` span ends
// with: its outcome, duration, usage and latency summary. They are what
// the request families (TTFT, duration, phases, outcomes, the GenAI
// histograms) record.
type Observations struct {
	Outcome      Outcome // OutcomeError when the status is absent or unknown
	DurationMs   latency.NullFloat
	InputTokens  int
	OutputTokens int
	FinishReason string          // empty when absent
	Summary      latency.Summary // the SPEC section 4 summary, nulls kept
}

// ObservationsFromAttributes derives a chat span's request-level
// observations from its attributes (names.go), the inverse of the
// attributes Request.End sets. It is the one end-of-request derivation:
// Processor.OnEnd runs it over the span it sees, and a Collector connector
// runs it over exported spans (their attributes converted to
// attribute.KeyValue), so both count the same numbers. Unknown keys are
// ignored; the retained gaps (AttrGapsMs, AttrGapReasons) are not read.
func ObservationsFromAttributes(attrs []attribute.KeyValue) Observations {
	o := Observations{Outcome: OutcomeError}
	for _, kv := range attrs {
		o.set(string(kv.Key), kv.Value)
	}
	return o
}

// set applies one attribute.
func (o *Observations) set(k string, v attribute.Value) {
	s := &o.Summary
	switch k {
	case AttrStatus:
		o.Outcome, _ = ParseOutcome(v.AsString())
	case AttrDurationMs:
		o.DurationMs = latency.Float(v.AsFloat64())
	case AttrGenAIUsageInputTokens:
		o.InputTokens = int(v.AsInt64())
	case AttrGenAIUsageOutputTokens:
		o.OutputTokens = int(v.AsInt64())
	case AttrGenAIResponseFinishReasons:
		if r := v.AsStringSlice(); len(r) > 0 {
			o.FinishReason = r[0]
		}
	case AttrEmittedTokens:
		s.EmittedTokens = int(v.AsInt64())
	case AttrGapSamples:
		s.GapSamples = int(v.AsInt64())
	case AttrRetainedGapSamples:
		s.RetainedGapSamples = int(v.AsInt64())
	case AttrGapSamplesTruncated:
		s.GapSamplesTruncated = v.AsBool()
	case AttrStallCount:
		s.StallCount = int(v.AsInt64())
	case AttrUnexplainedStallCount:
		s.UnexplainedStallCount = int(v.AsInt64())
	default:
		if f := summaryFloat(s, k); f != nil {
			*f = latency.Float(v.AsFloat64())
		} else if name, ok := strings.CutPrefix(k, AttrStallReasonPrefix); ok {
			if r, ok := latency.ParseReason(name); ok {
				s.StallReasons[r] = int(v.AsInt64())
			}
		} else if name, ok := strings.CutPrefix(k, AttrPhasePrefix); ok {
			if ph, ok := latency.ParsePhase(strings.TrimSuffix(name, "_ms")); ok {
				s.Phases[ph] = latency.Float(v.AsFloat64())
			}
		}
	}
}

// summaryFloat returns the nullable summary field named by the attribute
// key k, or nil.
func summaryFloat(s *latency.Summary, k string) *latency.NullFloat {
	switch k {
	case AttrTTFTMs:
		return &s.TTFTMs
	case AttrITLP50Ms:
		return &s.ITLP50Ms
	case AttrITLP99Ms:
		return &s.ITLP99Ms
	case AttrITLP999Ms:
		return &s.ITLP999Ms
	case AttrMaxITLMs:
		return &s.MaxITLMs
	case AttrStallThresholdMs:
		return &s.StallThresholdMs
	}
	return nil
}
