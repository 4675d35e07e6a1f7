package telemetry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestActiveAdapterOneSeries: kiln_active_adapter reports nothing until
// set, then exactly one series, 1, labelled with the latest name: a swap
// replaces the series, never adds one.
func TestActiveAdapterOneSeries(t *testing.T) {
	h := newHarness(t, Config{})
	series := func() map[string]string {
		types, samples := parseSamples(h.scrape(t, ""))
		got := map[string]string{}
		for _, s := range samples {
			if s.name == MetricActiveAdapter {
				got[s.labels[LabelAdapterName]] = s.value
			}
		}
		if len(got) > 0 && types[MetricActiveAdapter] != "gauge" {
			t.Errorf("type %q, want gauge", types[MetricActiveAdapter])
		}
		return got
	}
	if got := series(); len(got) != 0 {
		t.Errorf("before SetActiveAdapter: %v, want no series", got)
	}
	for _, name := range []string{"base", "support-bot", "base"} {
		h.tel.SetActiveAdapter(name)
		if d := cmp.Diff(map[string]string{name: "1"}, series()); d != "" {
			t.Errorf("after SetActiveAdapter(%q) (-want +got):\n%s", name, d)
		}
	}
}
