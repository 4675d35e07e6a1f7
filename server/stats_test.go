package server

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/telemetry"
)

// TestOutcomeCounts: /health counts exactly telemetry's outcome set, under
// the label values of kiln_requests_total{status}; an outcome added to
// telemetry without a /health field fails here.
func TestOutcomeCounts(t *testing.T) {
	var s Server
	want := map[string]uint64{}
	for o := range telemetry.NumOutcomes {
		for range int(o) + 1 {
			s.countOutcome(o)
		}
		want[o.String()] = uint64(o) + 1
	}
	s.countOutcome(telemetry.NumOutcomes + 3) // outside the set: an error, as its label says
	want[telemetry.OutcomeError.String()]++

	b, err := json.Marshal(s.outcomeCounts())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]uint64
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("/health requests (-want +got):\n%s", d)
	}
}
