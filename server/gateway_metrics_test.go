package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kiln-ai/kiln/telemetry"
)

// TestGatewayGauges: under a known load (one request admitted and held in
// a decode step, one waiting behind it, a batch of one) the three gauges
// an inference gateway's Endpoint Picker scrapes read 1 queued, 1 running
// and the held request's KV reservation (its prompt plus max_tokens) over
// the KV budget; once both are done, all three read 0. Each is one
// unlabelled gauge series, the form the picker reads.
func TestGatewayGauges(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) {
		c.MaxStreams = 0
		c.Engine.MaxBatch, c.Engine.QueueDepth = 1, 4
	}))
	const maxTokens = 16
	// The second decode step: the cycle that admitted the request and its
	// first decode step have ended, so the engine's snapshot has it active
	// and its KV reserved.
	entered, gate := h.holdDecode(2)
	type result struct {
		status int
		body   []byte
	}
	results := make(chan result, 2)
	post := func() {
		status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"max_tokens": maxTokens}), nil)
		results <- result{status, body}
	}
	go post() // admitted, held in its second decode step
	select {
	case <-entered:
	case r := <-results:
		t.Fatalf("the first request ended before its second decode step: %d %s", r.status, r.body)
	case <-time.After(30 * time.Second):
		t.Fatal("the first request never reached its second decode step")
	}
	go post() // waits for admission: the batch holds one
	waitFor(t, "the second request to queue", func() bool { return h.eng.Snapshot().QueueDepth == 1 })
	snap := h.eng.Snapshot()
	held := map[string]float64{
		telemetry.MetricQueuedRequests:            h.gauge(t, telemetry.MetricQueuedRequests),
		telemetry.MetricRunningRequests:           h.gauge(t, telemetry.MetricRunningRequests),
		telemetry.MetricKVUtilization:             h.gauge(t, telemetry.MetricKVUtilization),
		"kiln_batching_engine_kv_reserved_tokens": h.gauge(t, "kiln_batching_engine_kv_reserved_tokens"),
		"kiln_batching_engine_kv_budget_tokens":   h.gauge(t, "kiln_batching_engine_kv_budget_tokens"),
	}
	close(gate)
	var usage struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	for range 2 {
		r := <-results
		if r.status != http.StatusOK {
			t.Fatalf("held request: %d %s", r.status, r.body)
		}
		if err := json.Unmarshal(r.body, &usage); err != nil {
			t.Fatal(err)
		}
	}
	reserved := usage.Usage.PromptTokens + maxTokens // both requests have the same prompt
	if snap.KVBudget <= reserved || snap.KVReserved != reserved {
		t.Fatalf("engine while held: reserved %d of %d, want %d of more", snap.KVReserved, snap.KVBudget, reserved)
	}
	want := map[string]float64{
		telemetry.MetricQueuedRequests:            1,
		telemetry.MetricRunningRequests:           1,
		telemetry.MetricKVUtilization:             float64(reserved) / float64(snap.KVBudget),
		"kiln_batching_engine_kv_reserved_tokens": float64(reserved),
		"kiln_batching_engine_kv_budget_tokens":   float64(snap.KVBudget),
	}
	if d := cmp.Diff(want, held); d != "" {
		t.Errorf("gauges while one request runs and one waits (-want +got):\n%s", d)
	}

	// The last token's delivery frees the KV.
	waitFor(t, "the engine to free both requests", func() bool {
		s := h.eng.Snapshot()
		return s.Active == 0 && s.KVReserved == 0 && s.QueueDepth == 0
	})
	for _, name := range []string{telemetry.MetricQueuedRequests, telemetry.MetricRunningRequests, telemetry.MetricKVUtilization} {
		if got := h.gauge(t, name); got != 0 {
			t.Errorf("%s = %v once both requests are done, want 0", name, got)
		}
	}
}

// gauge scrapes /metrics and returns the value of the family's only
// series, failing unless it is a gauge with exactly one unlabelled series:
// what the Endpoint Picker reads (it takes the gauge value of the named
// family's series).
func (h *harness) gauge(t *testing.T, family string) float64 {
	t.Helper()
	mf := h.metricFamilies(t)[family]
	if mf == nil || len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetGauge() == nil || len(mf.GetMetric()[0].GetLabel()) != 0 {
		t.Fatalf("%s: %v, want one unlabelled gauge series", family, mf)
	}
	return mf.GetMetric()[0].GetGauge().GetValue()
}

// metricFamilies scrapes and parses /metrics.
func (h *harness) metricFamilies(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(h.getJSON("/metrics", nil)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// TestPrefixCacheFamiliesExposed: the server's /metrics has every prefix
// cache family from the start, the eviction families with a series for
// each reason of the closed set and the byte gauge one per state.
func TestPrefixCacheFamiliesExposed(t *testing.T) {
	h := newHarness(t)
	fams := h.metricFamilies(t)
	reasons := []string{"capacity", "resize", "subsumed", "superseded", "trim"}
	for _, tc := range []struct {
		family, label string
		want          []string // the label's values; nil: one unlabelled series
	}{
		{telemetry.MetricPrefixCacheQueriedTokens, "", nil},
		{telemetry.MetricPrefixCacheHitTokens, "", nil},
		{telemetry.MetricPrefixCacheLookups, "", nil},
		{telemetry.MetricPrefixCacheHits, "", nil},
		{telemetry.MetricPrefixCacheEvictions, "reason", reasons},
		{telemetry.MetricPrefixCacheEvictedBytes, "reason", reasons},
		{telemetry.MetricPrefixCacheBytes, "state", []string{"idle", "in_use"}},
		{telemetry.MetricPrefixCacheLimitBytes, "", nil},
		{telemetry.MetricPrefixCacheBlocks, "", nil},
		{telemetry.MetricPrefixCacheEnabled, "", nil},
	} {
		mf := fams[tc.family]
		if mf == nil {
			t.Errorf("%s missing", tc.family)
			continue
		}
		var got []string
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() != tc.label {
					t.Errorf("%s has label %q", tc.family, lp.GetName())
				}
				got = append(got, lp.GetValue())
			}
		}
		slices.Sort(got)
		if d := cmp.Diff(tc.want, got); d != "" || tc.want == nil && len(mf.GetMetric()) != 1 {
			t.Errorf("%s: %d series, %s values (-want +got):\n%s", tc.family, len(mf.GetMetric()), tc.label, d)
		}
	}
}
