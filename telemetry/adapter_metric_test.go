package telemetry

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAdapterGauges: kiln_adapter_active and kiln_adapter_revision report
// nothing until set, then one unlabelled series each: 0 and 0 on the base
// model, 1 and the revision number (exact, as the scrape prints it) with an
// adapter; a swap replaces the values, never adds a series.
func TestAdapterGauges(t *testing.T) {
	h := newHarness(t, Config{})
	series := func() map[string]float64 {
		types, samples := parseSamples(h.scrapeAll(t, ""))
		got := map[string]float64{}
		for _, s := range samples {
			if s.name != MetricAdapterActive && s.name != MetricAdapterRevision {
				continue
			}
			if len(s.labels) != 0 {
				t.Errorf("%s has labels %v, want none", s.name, s.labels)
			}
			if _, dup := got[s.name]; dup {
				t.Errorf("%s has more than one series", s.name)
			}
			v, err := strconv.ParseFloat(s.value, 64)
			if err != nil {
				t.Fatalf("%s = %q: %v", s.name, s.value, err)
			}
			got[s.name] = v
			if types[s.name] != "gauge" {
				t.Errorf("%s type %q, want gauge", s.name, types[s.name])
			}
		}
		return got
	}
	if got := series(); len(got) != 0 {
		t.Errorf("before SetActiveAdapter: %v, want no series", got)
	}
	const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	for _, c := range []struct {
		loaded   bool
		revision string
		want     map[string]float64
	}{
		{false, "base", map[string]float64{MetricAdapterActive: 0, MetricAdapterRevision: 0}},
		{true, sha, map[string]float64{MetricAdapterActive: 1, MetricAdapterRevision: 0x9f86d081884c7}},
		{false, sha, map[string]float64{MetricAdapterActive: 0, MetricAdapterRevision: 0}}, // base: the revision is ignored
	} {
		h.tel.SetActiveAdapter(c.loaded, c.revision)
		if d := cmp.Diff(c.want, series()); d != "" {
			t.Errorf("after SetActiveAdapter(%v, %q) (-want +got):\n%s", c.loaded, c.revision, d)
		}
	}
}

// TestAdapterRevisionNumber: the first 13 hex digits of a sha256, exact in
// a float64 even at their largest; 0 for what is not such a hash.
func TestAdapterRevisionNumber(t *testing.T) {
	for rev, want := range map[string]int64{
		"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08": 0x9f86d081884c7,
		"fffffffffffff000": 1<<52 - 1,
		"0000000000001abc": 1,
		"base":             0,
		"":                 0,
		"zzzzzzzzzzzzzzzz": 0,
	} {
		got := AdapterRevisionNumber(rev)
		if got != want {
			t.Errorf("AdapterRevisionNumber(%q) = %d, want %d", rev, got, want)
		}
		if int64(float64(got)) != got {
			t.Errorf("AdapterRevisionNumber(%q) = %d is not exact in a float64", rev, got)
		}
	}
}

// TestNoMetricNameLabel: no family of the whole exposition (the process
// and Go runtime ones included) carries a `name` label, with an adapter
// loaded: adapter names are never labels.
func TestNoMetricNameLabel(t *testing.T) {
	h := newHarness(t, Config{})
	playTraffic(h)
	h.tel.SetActiveAdapter(true, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
	_, samples := parseSamples(h.scrapeAll(t, ""))
	seen := false
	for _, s := range samples {
		seen = seen || s.name == MetricAdapterActive
		if _, ok := s.labels["name"]; ok {
			t.Errorf("%s has a name label: %v", s.name, s.labels)
		}
	}
	if !seen {
		t.Errorf("no %s sample in the exposition", MetricAdapterActive)
	}
}
