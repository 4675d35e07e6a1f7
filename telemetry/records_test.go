package telemetry

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

func TestRecords(t *testing.T) {
	var phases latency.PhaseTotals
	phases[latency.PhasePrefill] = latency.Float(250)
	phases[latency.PhaseActorQueue] = latency.Float(0)
	var wantPhases latency.PhaseTotals
	wantPhases[latency.PhasePrefill] = latency.Float(0.25)
	wantPhases[latency.PhaseActorQueue] = latency.Float(0)
	tests := []struct {
		name string
		o    Observations
		want RequestRecords
	}{
		{"complete stream",
			Observations{Outcome: OutcomeOK, DurationMs: latency.Float(1500), Summary: latency.Summary{
				EmittedTokens: 11, TTFTMs: latency.Float(500), Phases: phases}},
			RequestRecords{Outcome: OutcomeOK, Duration: latency.Float(1.5), TTFT: latency.Float(0.5),
				TPOT: latency.Float(0.1), Phases: wantPhases}},
		{"one token: no TPOT",
			Observations{Outcome: OutcomeOK, DurationMs: latency.Float(100), Summary: latency.Summary{
				EmittedTokens: 1, TTFTMs: latency.Float(40)}},
			RequestRecords{Outcome: OutcomeOK, Duration: latency.Float(0.1), TTFT: latency.Float(0.04)}},
		{"no token: duration only",
			Observations{Outcome: OutcomeClientDisconnect, DurationMs: latency.Float(90)},
			RequestRecords{Outcome: OutcomeClientDisconnect, Duration: latency.Float(0.09)}},
		{"negative values are not recorded",
			Observations{Outcome: OutcomeError, DurationMs: latency.Float(-1), Summary: latency.Summary{
				EmittedTokens: 3, TTFTMs: latency.Float(-2)}},
			RequestRecords{Outcome: OutcomeError}},
		{"duration before TTFT: no TPOT",
			Observations{Outcome: OutcomeOK, DurationMs: latency.Float(10), Summary: latency.Summary{
				EmittedTokens: 3, TTFTMs: latency.Float(20)}},
			RequestRecords{Outcome: OutcomeOK, Duration: latency.Float(0.01), TTFT: latency.Float(0.02)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.o.Records()); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGapFromMs: a gap exported in milliseconds comes back as the same
// Duration, so the connector's ITL value and stall test equal the live
// ones, at and around the fixed threshold and the bucket bounds.
func TestGapFromMs(t *testing.T) {
	gaps := []time.Duration{0, 1, 999_999, latency.StallThreshold - 1, latency.StallThreshold,
		latency.StallThreshold + 1, 2500*time.Millisecond + 1, time.Minute, 3*time.Hour + 7}
	for _, b := range Buckets() {
		d := time.Duration(b * 1e9)
		gaps = append(gaps, d-1, d, d+1)
	}
	for _, d := range gaps {
		ms := float64(d) / 1e6 // as the span attribute is written (timing.Ms)
		got := GapFromMs(ms)
		if got != d {
			t.Errorf("GapFromMs(%v) = %v, want %v", ms, got, d)
		}
		if IsStall(got) != (d >= latency.StallThreshold) {
			t.Errorf("IsStall(%v) = %v", d, IsStall(got))
		}
	}
}
