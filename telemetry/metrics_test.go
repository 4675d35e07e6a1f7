package telemetry

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

var sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)`)
var labelRE = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

type sample struct {
	name   string
	labels map[string]string
	value  string
}

func parseSamples(text string) (types map[string]string, samples []sample) {
	types = map[string]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			parts := strings.Fields(f)
			types[parts[0]] = parts[1]
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := sample{name: m[1], labels: map[string]string{}, value: m[3]}
		for _, l := range labelRE.FindAllStringSubmatch(m[2], -1) {
			s.labels[l[1]] = l[2]
		}
		samples = append(samples, s)
	}
	return types, samples
}

// playTraffic runs a few requests covering every outcome path, with an
// adapter loaded (so its label-free gauges are in the exposition).
func playTraffic(h *harness) {
	h.tel.SetActiveAdapter(true, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
	ctx := context.Background()
	h.runRequest(ctx, "secret-model-xyz", []time.Duration{50 * msD, 70 * msD, 400 * msD, 410 * msD},
		map[int]timing.Phases{2: {Prefill: 300 * msD, Decode: 20 * msD}}, OutcomeOK)
	h.runRequest(ctx, "secret-model-xyz", []time.Duration{30 * msD}, nil, OutcomeClientDisconnect)
	h.runRequest(ctx, "secret-model-xyz", nil, nil, OutcomeTimeout)
	h.tel.CountRejected()
	h.tel.SetEngineSource(func() timing.EngineSnapshot {
		return timing.EngineSnapshot{QueueDepth: 3, Active: 2, BatchLast: 2, ForwardTotal: 1500 * msD, Forwards: 10, Cycles: 12,
			KVReserved: 96, KVBudget: 512, PrefixCache: playPrefixCache}
	})
}

// playPrefixCache is the prefix cache playTraffic's engine reports.
var playPrefixCache = timing.PrefixCacheStats{
	Enabled: true, LimitBytes: 1 << 20, Bytes: 49152, IdleBytes: 16384, Blocks: 3, BlockLen: 16,
	Lookups: 4, Hits: 3, QueriedTokens: 400, HitTokens: 290,
	Evictions:    [timing.NumPrefixEvicts]uint64{timing.PrefixEvictCapacity: 2, timing.PrefixEvictSuperseded: 1},
	EvictedBytes: [timing.NumPrefixEvicts]uint64{timing.PrefixEvictCapacity: 32768, timing.PrefixEvictSuperseded: 16384},
}

func TestMetricsExposition(t *testing.T) {
	h := newHarness(t, Config{})
	playTraffic(h)
	text := h.scrape(t, "")
	golden(t, "metrics.txt", text)

	types, samples := parseSamples(text)
	wantTypes := map[string]string{
		"kiln_token_itl_seconds":                      "histogram",
		"kiln_token_stalls_total":                     "counter",
		"kiln_request_ttft_seconds":                   "histogram",
		"kiln_request_latency_phase_seconds":          "histogram",
		"kiln_request_duration_seconds":               "histogram",
		"kiln_requests_total":                         "counter",
		"kiln_tokens_generated_total":                 "counter",
		"kiln_active_requests":                        "gauge",
		MetricAdapterActive:                           "gauge",
		MetricAdapterRevision:                         "gauge",
		"gen_ai_server_time_to_first_token_seconds":   "histogram",
		"gen_ai_server_time_per_output_token_seconds": "histogram",
		"gen_ai_server_request_duration_seconds":      "histogram",
		MetricQueuedRequests:                          "gauge",
		MetricRunningRequests:                         "gauge",
		MetricKVUtilization:                           "gauge",
		MetricPrefixCacheQueriedTokens:                "counter",
		MetricPrefixCacheHitTokens:                    "counter",
		MetricPrefixCacheLookups:                      "counter",
		MetricPrefixCacheHits:                         "counter",
		MetricPrefixCacheEvictions:                    "counter",
		MetricPrefixCacheEvictedBytes:                 "counter",
		MetricPrefixCacheBytes:                        "gauge",
		MetricPrefixCacheLimitBytes:                   "gauge",
		MetricPrefixCacheBlocks:                       "gauge",
		MetricPrefixCacheEnabled:                      "gauge",
	}
	for name, typ := range wantTypes {
		if types[name] != typ {
			t.Errorf("family %s: TYPE %q, want %q", name, types[name], typ)
		}
	}
	wantLE := []string{"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "+Inf"}
	allowed := map[string]bool{"le": true, LabelReason: true, LabelPhase: true, LabelStatus: true, LabelOutcome: true, "gen_ai_operation_name": true, LabelResizeDirection: true, LabelPrefixCacheState: true}
	les := map[string][]string{} // family+labels -> le values
	for _, s := range samples {
		fam := s.name
		if !strings.HasPrefix(fam, "kiln_") && !strings.HasPrefix(fam, "gen_ai_") {
			t.Errorf("unexpected family %s", fam)
		}
		for k := range s.labels {
			if !allowed[k] {
				t.Errorf("%s has label %q outside the closed sets", fam, k)
			}
		}
		switch v, ok := s.labels[LabelReason]; {
		case fam == MetricKVResizes:
			if !slices.Contains(resizeReasons[:], s.labels[LabelResizeReason]) || !slices.Contains(resizeDirections[:], s.labels[LabelResizeDirection]) {
				t.Errorf("%s %v outside the closed sets", fam, s.labels)
			}
		case fam == MetricPrefixCacheEvictions || fam == MetricPrefixCacheEvictedBytes:
			if !slices.Contains(PrefixEvictReasons(), v) {
				t.Errorf("%s reason=%q not in the closed set", fam, v)
			}
		case ok:
			if _, ok := latency.ParseReason(v); !ok {
				t.Errorf("%s reason=%q not in the closed set", fam, v)
			}
		}
		if v, ok := s.labels[LabelPhase]; ok {
			if _, ok := latency.ParsePhase(v); !ok {
				t.Errorf("%s phase=%q not in the closed set", fam, v)
			}
		}
		if v, ok := s.labels[LabelPrefixCacheState]; ok && (fam != MetricPrefixCacheBytes || v != PrefixCacheStateInUse && v != PrefixCacheStateIdle) {
			t.Errorf("%s state=%q not in the closed set", fam, v)
		}
		if v, ok := s.labels[LabelOutcome]; ok && v != ReclaimOutcomeReclaimed && v != ReclaimOutcomeZeroYield {
			t.Errorf("%s outcome=%q not in the closed set", fam, v)
		}
		if strings.HasSuffix(fam, "_bucket") {
			key := fam + s.labels[LabelPhase] + s.labels["gen_ai_operation_name"]
			les[key] = append(les[key], s.labels["le"])
		}
	}
	if len(les) < 7 {
		t.Errorf("only %d histogram series", len(les))
	}
	for key, got := range les {
		if diff := cmp.Diff(wantLE, got); diff != "" {
			t.Errorf("%s buckets (-want +got):\n%s", key, diff)
		}
	}
	// every closed-set series exists from the start
	var reasons, statuses []string
	for _, s := range samples {
		switch s.name {
		case "kiln_token_stalls_total":
			reasons = append(reasons, s.labels[LabelReason])
		case "kiln_requests_total":
			statuses = append(statuses, s.labels[LabelStatus])
		}
	}
	if len(reasons) != int(latency.NumReasons) {
		t.Errorf("%d stall reason series, want 19", len(reasons))
	}
	slices.Sort(statuses)
	if diff := cmp.Diff([]string{"client_disconnect", "error", "ok", "rejected", "timeout"}, statuses); diff != "" {
		t.Errorf("status series (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"secret-model-xyz", "model"} {
		if strings.Contains(text, secret) {
			t.Errorf("/metrics contains %q", secret)
		}
	}
}

func TestMetricValues(t *testing.T) {
	h := newHarness(t, Config{})
	playTraffic(h)
	_, samples := parseSamples(h.scrape(t, ""))
	got := map[string]string{}
	for _, s := range samples {
		key := s.name
		for _, l := range []string{LabelReason, LabelPhase, LabelStatus, LabelPrefixCacheState} {
			if v, ok := s.labels[l]; ok {
				key += "{" + l + "=" + v + "}"
			}
		}
		if s.labels["le"] == "" {
			got[key] = s.value
		}
	}
	want := map[string]string{
		"kiln_requests_total{status=ok}":                               "1",
		"kiln_requests_total{status=client_disconnect}":                "1",
		"kiln_requests_total{status=timeout}":                          "1",
		"kiln_requests_total{status=rejected}":                         "1",
		"kiln_requests_total{status=error}":                            "0",
		"kiln_tokens_generated_total":                                  "5",
		"kiln_active_requests":                                         "0",
		"kiln_token_itl_seconds_count":                                 "3", // gaps 20, 330, 10 ms
		"kiln_token_stalls_total{reason=actor_prefill}":                "1", // the 330 ms gap
		"kiln_token_stalls_total{reason=unexplained}":                  "0",
		"kiln_request_ttft_seconds_count":                              "2", // the timeout request had no token
		"kiln_request_duration_seconds_count":                          "3",
		"kiln_request_latency_phase_seconds_count{phase=tokenization}": "3",
		// client_delivery is observed for the two streamed requests with tokens
		"kiln_request_latency_phase_seconds_count{phase=client_delivery}": "2",
		// actor_queue: two requests from tokens, the timeout one from the engine instants
		"kiln_request_latency_phase_seconds_count{phase=actor_queue}": "3",
		"kiln_request_latency_phase_seconds_count{phase=unexplained}": "1",
		"kiln_batching_engine_forward_seconds_total":                  "1.5",
		"kiln_batching_engine_forward_steps_total":                    "10",
		// the gateway gauges: 96 of 512 KV positions reserved
		MetricQueuedRequests:                                  "3",
		MetricRunningRequests:                                 "2",
		MetricKVUtilization:                                   "0.1875",
		"kiln_batching_engine_kv_reserved_tokens":             "96",
		"kiln_batching_engine_kv_budget_tokens":               "512",
		MetricPrefixCacheQueriedTokens:                        "400",
		MetricPrefixCacheHitTokens:                            "290",
		MetricPrefixCacheLookups:                              "4",
		MetricPrefixCacheHits:                                 "3",
		MetricPrefixCacheEvictions + "{reason=capacity}":      "2",
		MetricPrefixCacheEvictions + "{reason=superseded}":    "1",
		MetricPrefixCacheEvictions + "{reason=trim}":          "0",
		MetricPrefixCacheEvictedBytes + "{reason=capacity}":   "32768",
		MetricPrefixCacheEvictedBytes + "{reason=superseded}": "16384",
		MetricPrefixCacheEvictedBytes + "{reason=resize}":     "0",
		MetricPrefixCacheBytes + "{state=in_use}":             "32768",
		MetricPrefixCacheBytes + "{state=idle}":               "16384",
		MetricPrefixCacheLimitBytes:                           "1.048576e+06",
		MetricPrefixCacheBlocks:                               "3",
		MetricPrefixCacheEnabled:                              "1",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["kiln_request_latency_phase_seconds_count{phase=graph_capture}"]; ok {
		t.Error("a never-observed phase was recorded")
	}
}

func TestExemplarsInOpenMetrics(t *testing.T) {
	h := newHarness(t, Config{})
	h.runRequest(context.Background(), "m", []time.Duration{50 * msD, 70 * msD}, nil, OutcomeOK)
	chat := h.exp.GetSpans()
	var traceID string
	for _, s := range chat {
		if strings.HasPrefix(s.Name, SpanChatPrefix) {
			traceID = s.SpanContext.TraceID().String()
		}
	}
	if traceID == "" {
		t.Fatal("no chat span exported")
	}
	text := h.scrape(t, "application/openmetrics-text; version=1.0.0; charset=utf-8")
	for _, fam := range []string{"kiln_token_itl_seconds_bucket", "kiln_request_ttft_seconds_bucket", "kiln_request_duration_seconds_bucket"} {
		found := false
		for line := range strings.Lines(text) {
			if strings.HasPrefix(line, fam) && strings.Contains(line, " # {") && strings.Contains(line, `trace_id="`+traceID+`"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no exemplar with trace id %s in:\n%s", fam, traceID, text)
		}
	}
}

func TestMetricsCoverUnsampledRequests(t *testing.T) {
	h := newHarness(t, Config{Sampler: SamplerAlwaysOff})
	h.runRequest(context.Background(), "m", []time.Duration{50 * msD, 400 * msD}, nil, OutcomeOK)
	if n := len(h.exp.GetSpans()); n != 0 {
		t.Errorf("always_off exported %d spans", n)
	}
	if n := len(h.rec.Ended()); n == 0 {
		t.Error("spans were not even recorded")
	}
	_, samples := parseSamples(h.scrape(t, ""))
	for _, s := range samples {
		if s.name == "kiln_requests_total" && s.labels[LabelStatus] == "ok" && s.value != "1" {
			t.Errorf("requests_total{ok} = %s, want 1", s.value)
		}
		if s.name == "kiln_request_ttft_seconds_count" && s.value != "1" {
			t.Errorf("ttft count = %s, want 1", s.value)
		}
	}
}

func TestDecodeStats(t *testing.T) {
	h := newHarness(t, Config{})
	h.runRequest(context.Background(), "m", []time.Duration{0, 20 * msD, 40 * msD, 60 * msD}, nil, OutcomeOK)
	h.clock.Set(at(time.Second))
	got := h.tel.DecodeStats()
	want := latency.DecodeStats{SampleCount: 3, TokPerSec: 50, P50ITLMs: 20, P99ITLMs: 20, P999ITLMs: 20, MeanITLMs: 20, MaxITLMs: 20,
		StallThresholdMs: 250, WindowSecs: 60}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decode stats (-want +got):\n%s", diff)
	}
	h.clock.Set(at(61 * time.Second))
	if got := h.tel.DecodeStats(); got.SampleCount != 0 {
		t.Errorf("after 61 s: sample_count %d", got.SampleCount)
	}
}
