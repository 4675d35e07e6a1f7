package telemetry

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// TestObservationsRoundTrip: summary -> the chat span's end attributes ->
// observations gives back the summary, outcome, duration and usage.
func TestObservationsRoundTrip(t *testing.T) {
	full := latency.Summary{
		EmittedTokens: 40, GapSamples: 39, RetainedGapSamples: 39, GapSamplesTruncated: true,
		TTFTMs: latency.Float(312.5), ITLP50Ms: latency.Float(20), ITLP99Ms: latency.Float(301),
		ITLP999Ms: latency.Float(309.9), MaxITLMs: latency.Float(310), StallThresholdMs: latency.Float(250),
		StallCount: 3, UnexplainedStallCount: 1,
	}
	full.StallReasons[latency.ReasonActorPrefill] = 2
	full.StallReasons[latency.ReasonUnexplained] = 1
	for ph := range latency.NumPhases {
		if ph%3 != 0 { // some null, some zero, some positive
			full.Phases[ph] = latency.Float(float64(ph) * 1.25)
		}
	}
	tests := []struct {
		name string
		s    latency.Summary
		info EndInfo
		dur  time.Duration
	}{
		{"every field", full, EndInfo{Outcome: OutcomeTimeout, FinishReason: "timeout", PromptTokens: 12, CompletionTokens: 40}, 2500 * time.Millisecond},
		{"no token: nulls stay null", latency.Summary{}, EndInfo{Outcome: OutcomeClientDisconnect, PromptTokens: 7}, 90 * time.Millisecond},
		{"ok", latency.Summary{EmittedTokens: 1, TTFTMs: latency.Float(40)}, EndInfo{Outcome: OutcomeOK, FinishReason: "stop", PromptTokens: 3, CompletionTokens: 1}, 41 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			attrs := endAttributes(&tc.s, tc.info, tc.dur, []float64{20, 310}, []int64{0, 1})
			got := ObservationsFromAttributes(attrs)
			want := Observations{
				Outcome: tc.info.Outcome, DurationMs: latency.Float(float64(tc.dur) / 1e6),
				InputTokens: tc.info.PromptTokens, OutputTokens: tc.info.CompletionTokens,
				FinishReason: tc.info.FinishReason, Summary: tc.s,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("observations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObservationsDefaults(t *testing.T) {
	got := ObservationsFromAttributes([]attribute.KeyValue{
		attribute.String(AttrStatus, "no such status"),
		attribute.Int(AttrStallReasonPrefix+"no_such_reason", 4),
		attribute.Float64(AttrPhasePrefix+"no_such_phase_ms", 4),
		attribute.String("unrelated", "x"),
	})
	if diff := cmp.Diff(Observations{Outcome: OutcomeError}, got); diff != "" {
		t.Errorf("unknown values (-want +got):\n%s", diff)
	}
}
