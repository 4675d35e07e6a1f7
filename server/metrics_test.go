package server

import (
	"bytes"
	"math"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kiln-ai/kiln/telemetry"
)

// Closed label sets of docs/latency-guide.md#prometheus.
var closedLabels = map[string]map[string]bool{
	"reason": set("actor_queue", "actor_admission", "actor_prefill", "actor_decode", "actor_cycle_idle",
		"response_delivery", "handler_queue", "client_delivery", "sampling", "readback", "gpu_lock_wait",
		"graph_capture", "graph_replay", "synchronization", "resize", "trim", "adapter", "training", "unexplained"),
	"phase": set("actor_queue", "actor_admission", "tokenization", "prefill", "decode", "actor_cycle_idle",
		"sampling", "readback", "response_delivery", "handler_queue", "client_delivery", "gpu_lock_wait",
		"graph_capture", "graph_replay", "synchronization", "resize", "trim", "adapter", "training", "unexplained"),
	"status": set("ok", "error", "timeout", "rejected", "client_disconnect",
		"completed", "failed", "cancelled"), // the last three: kiln_training_jobs_total
	"type":      set("sft"),                     // kiln_training_jobs_total
	"outcome":   set("reclaimed", "zero_yield"), // kiln_memory_reclaim_attempts_total
	"direction": set("grow", "shrink", "none"),  // kiln_kv_resizes_total
	"state":     set("in_use", "idle"),          // kiln_prefix_cache_bytes
}

// familyLabels are closed sets of one family that differ from the
// common ones of the same label name.
var familyLabels = map[string]map[string]map[string]bool{
	"kiln_kv_resizes_total":                 {"reason": set("maintenance", "automatic_memory_policy", "training_memory_preparation")},
	"kiln_prefix_cache_evictions_total":     {"reason": prefixEvictReasons},
	"kiln_prefix_cache_evicted_bytes_total": {"reason": prefixEvictReasons},
}

// prefixEvictReasons is the closed set of the prefix cache's eviction
// reasons (timing.PrefixEvict).
var prefixEvictReasons = set("capacity", "trim", "resize", "superseded", "subsumed")

func set(s ...string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}

// TestMetricsExposition: after real traffic (including identities and text
// in every place a client can put them), /metrics has the exact buckets,
// only closed-set labels on Kiln families, and none of the client's text or
// the model id.
func TestMetricsExposition(t *testing.T) {
	h := newHarness(t)
	const (
		promptMark = "MARKPROMPTzq"
		userMark   = "MARKUSERzq"
		uaMark     = "MARKAGENTzq"
		clientMark = "MARKCLIENTzq"
	)
	hdr := map[string]string{"User-Agent": uaMark, "X-Kiln-Client": clientMark}
	for _, stream := range []bool{false, true} {
		status, _, b := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{
			"stream": stream, "user": userMark, "include_performance": true,
			"messages": []map[string]any{{"role": "user", "content": promptMark}},
		}), hdr)
		if status != http.StatusOK {
			t.Fatalf("chat: %d %s", status, b)
		}
	}
	h.do(http.MethodPost, chatPath, `{"model":"`+promptMark+`","messages":[]}`, hdr) // an error with client text

	body := h.getJSON("/metrics", nil)
	for _, mark := range []string{promptMark, userMark, uaMark, clientMark, h.model.ID} {
		if bytes.Contains(body, []byte(mark)) {
			t.Errorf("/metrics contains %q", mark)
		}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	wantBuckets := []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, math.Inf(1)}
	for _, name := range []string{"kiln_token_itl_seconds", "kiln_request_ttft_seconds", "kiln_request_latency_phase_seconds", "kiln_request_duration_seconds"} {
		mf, ok := fams[name]
		if !ok || mf.GetType() != dto.MetricType_HISTOGRAM || len(mf.GetMetric()) == 0 {
			t.Errorf("%s: missing or not a histogram with samples", name)
			continue
		}
		for _, m := range mf.GetMetric() {
			var got []float64
			for _, b := range m.GetHistogram().GetBucket() {
				got = append(got, b.GetUpperBound())
			}
			if diff := cmp.Diff(wantBuckets, got); diff != "" {
				t.Errorf("%s buckets (-want +got):\n%s", name, diff)
			}
		}
	}
	for _, name := range []string{"kiln_token_stalls_total", "kiln_requests_total", "kiln_tokens_generated_total", "kiln_active_requests"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("family %s missing", name)
		}
	}
	// kiln_build_info is one series whose labels name the build (a
	// closed set of one per process); every other kiln_ label is closed.
	if bi := fams["kiln_build_info"]; bi == nil || len(bi.GetMetric()) != 1 || len(bi.GetMetric()[0].GetLabel()) != 3 {
		t.Errorf("kiln_build_info: %v, want one series with version, revision and goversion", bi)
	}
	for _, fam := range []string{"process_cpu_seconds_total", "go_goroutines"} {
		if fams[fam] == nil {
			t.Errorf("family %s missing", fam)
		}
	}
	checkAdapterFamilies(t, h, fams)
	for name, mf := range fams {
		if len(name) < 5 || name[:5] != "kiln_" || name == "kiln_build_info" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				values, ok := familyLabels[name][lp.GetName()]
				if !ok {
					values, ok = closedLabels[lp.GetName()]
				}
				if !ok {
					t.Errorf("%s has label %q outside the closed sets", name, lp.GetName())
					continue
				}
				if !values[lp.GetValue()] {
					t.Errorf("%s{%s=%q}: value outside the closed set", name, lp.GetName(), lp.GetValue())
				}
			}
		}
	}
	if got := h.metricValue(t, "kiln_requests_total", map[string]string{"status": "ok"}); got != 2 {
		t.Errorf(`kiln_requests_total{status="ok"} = %v, want 2`, got)
	}
	if got := h.metricValue(t, "kiln_requests_total", map[string]string{"status": "rejected"}); got != 1 {
		t.Errorf(`kiln_requests_total{status="rejected"} = %v, want 1`, got)
	}
}

// checkAdapterFamilies: the running adapter's gauges carry no label (an
// adapter name is never one; /health and /v1/config name it instead): one
// series each, 0 on the base model; and no family at all, Kiln's or the
// runtime's, has a name label.
func checkAdapterFamilies(t *testing.T, h *harness, fams map[string]*dto.MetricFamily) {
	t.Helper()
	for _, name := range []string{telemetry.MetricAdapterActive, telemetry.MetricAdapterRevision} {
		if mf := fams[name]; mf == nil || len(mf.GetMetric()) != 1 || len(mf.GetMetric()[0].GetLabel()) != 0 ||
			mf.GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Errorf("%s: %v, want one unlabelled series, 0", name, mf)
		}
	}
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "name" {
					t.Errorf("%s has a name label (%q)", name, lp.GetValue())
				}
			}
		}
	}
	checkRunningAdapter(t, h, baseAdapter, baseAdapter)
}
