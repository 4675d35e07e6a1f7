package telemetry

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/timing"
)

// TestPrefixCacheFamiliesFromTheStart: before the cache has looked up or
// evicted anything (a zero snapshot, as with the cache off), every prefix
// cache family is exposed, the two eviction families with one series per
// reason of the closed set and kiln_prefix_cache_bytes with one per state,
// all at 0, so rate() and sum by (reason) see zeros, not absent series.
func TestPrefixCacheFamiliesFromTheStart(t *testing.T) {
	h := newHarness(t, Config{})
	h.tel.SetEngineSource(func() timing.EngineSnapshot { return timing.EngineSnapshot{} })
	types, samples := parseSamples(h.scrape(t, ""))
	want := map[string]string{
		MetricPrefixCacheQueriedTokens: "counter",
		MetricPrefixCacheHitTokens:     "counter",
		MetricPrefixCacheLookups:       "counter",
		MetricPrefixCacheHits:          "counter",
		MetricPrefixCacheEvictions:     "counter",
		MetricPrefixCacheEvictedBytes:  "counter",
		MetricPrefixCacheBytes:         "gauge",
		MetricPrefixCacheLimitBytes:    "gauge",
		MetricPrefixCacheBlocks:        "gauge",
		MetricPrefixCacheEnabled:       "gauge",
	}
	for name, typ := range want {
		if types[name] != typ {
			t.Errorf("%s: TYPE %q, want %q", name, types[name], typ)
		}
	}
	labels := map[string][]string{} // family -> its series' label values
	for _, s := range samples {
		if _, ok := want[s.name]; !ok {
			continue
		}
		if s.value != "0" {
			t.Errorf("%s%v = %s, want 0", s.name, s.labels, s.value)
		}
		var v []string
		for k, val := range s.labels {
			v = append(v, k+"="+val)
		}
		if len(v) > 1 {
			t.Errorf("%s%v: more than one label", s.name, s.labels)
		}
		labels[s.name] = append(labels[s.name], v...)
	}
	reasons := []string{"reason=capacity", "reason=resize", "reason=subsumed", "reason=superseded", "reason=trim"}
	wantLabels := map[string][]string{
		MetricPrefixCacheEvictions:    reasons,
		MetricPrefixCacheEvictedBytes: reasons,
		MetricPrefixCacheBytes:        {"state=idle", "state=in_use"},
	}
	for name := range want {
		got := labels[name]
		slices.Sort(got)
		if d := cmp.Diff(wantLabels[name], got); d != "" {
			t.Errorf("%s series (-want +got):\n%s", name, d)
		}
	}
	if d := cmp.Diff([]string{"capacity", "trim", "resize", "superseded", "subsumed"}, PrefixEvictReasons()); d != "" {
		t.Errorf("PrefixEvictReasons (-want +got):\n%s", d)
	}
}

// TestKVUtilization: the gateway's KV-cache utilisation is the reserved
// positions over the budget, a fraction clamped to [0, 1].
func TestKVUtilization(t *testing.T) {
	tests := []struct {
		reserved, budget int
		want             float64
	}{
		{0, 0, 0},
		{0, 512, 0},
		{96, 512, 0.1875},
		{512, 512, 1},
		{600, 512, 1}, // never over 1, whatever a resize left behind
		{5, 0, 1},
	}
	for _, tc := range tests {
		if got := kvUtilization(&timing.EngineSnapshot{KVReserved: tc.reserved, KVBudget: tc.budget}); got != tc.want {
			t.Errorf("reserved %d of %d: %v, want %v", tc.reserved, tc.budget, got, tc.want)
		}
	}
}
