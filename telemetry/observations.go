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
	Summary      latency.Summary // the request summary (docs/latency-guide.md#the-request-summary-latency), nulls kept
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
		if f := summaryFloatField(s, k); f != nil {
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

// summaryFloat is a nullable summary field and its attribute key.
type summaryFloat struct {
	k string
	v *latency.NullFloat
}

// summaryFloats pairs each nullable summary field of s with its attribute
// key: the one mapping both directions use (endAttributes writes it,
// ObservationsFromAttributes reads it).
func summaryFloats(s *latency.Summary) [6]summaryFloat {
	return [6]summaryFloat{
		{AttrTTFTMs, &s.TTFTMs}, {AttrITLP50Ms, &s.ITLP50Ms}, {AttrITLP99Ms, &s.ITLP99Ms},
		{AttrITLP999Ms, &s.ITLP999Ms}, {AttrMaxITLMs, &s.MaxITLMs}, {AttrStallThresholdMs, &s.StallThresholdMs},
	}
}

// summaryFloatField returns the nullable field of s named by the attribute
// key k, or nil.
func summaryFloatField(s *latency.Summary, k string) *latency.NullFloat {
	for _, f := range summaryFloats(s) {
		if f.k == k {
			return f.v
		}
	}
	return nil
}
