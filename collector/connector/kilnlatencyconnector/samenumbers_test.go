package kilnlatencyconnector

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/kiln-ai/kiln/internal/promseries"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// gapChoices are the gaps a workload draws from: bucket bounds exactly
// and a nanosecond around them, ordinary decode gaps, and stalls.
var gapChoices = func() []time.Duration {
	g := []time.Duration{7 * time.Millisecond, 31 * time.Millisecond, latency.StallThreshold - 1,
		latency.StallThreshold, 400 * time.Millisecond, 1300 * time.Millisecond}
	for _, b := range telemetry.Buckets()[:8] {
		d := time.Duration(b * 1e9)
		g = append(g, d-1, d, d+1)
	}
	return g
}()

// serverRun plays a workload picked from seed through the server's real
// telemetry (the in-process span processor) and returns its /metrics
// exposition and the spans it exported.
func serverRun(t *testing.T, seed uint64) (string, *spanCollector) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	spans := &spanCollector{}
	now := t0
	tel, err := telemetry.New(telemetry.Config{ServiceName: "kiln-test"},
		telemetry.WithSpanExporter(spans), telemetry.WithClock(func() time.Time { return now }),
		telemetry.WithLogOutput(io.Discard, false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	outcomes := []telemetry.Outcome{telemetry.OutcomeOK, telemetry.OutcomeOK, telemetry.OutcomeTimeout,
		telemetry.OutcomeClientDisconnect, telemetry.OutcomeError}
	reasons := []func(*timing.Phases, time.Duration){
		func(p *timing.Phases, d time.Duration) { p.Prefill = d },
		func(p *timing.Phases, d time.Duration) { p.Decode = d },
		func(p *timing.Phases, d time.Duration) { p.ActorQueue = d },
		func(*timing.Phases, time.Duration) {}, // unexplained
		// An ownership wait that a training step a few ms shorter explains:
		// charged training (docs/latency-guide.md#how-a-reason-is-chosen, rule 2), not gpu_lock_wait.
		func(p *timing.Phases, d time.Duration) {
			p.Decode = d
			p.Observe(latency.BackendGPULockWait, d)
			p.Observe(latency.BackendTraining, max(d-3*time.Millisecond, 0))
		},
		// A wait that a trim explains only in part: gpu_lock_wait keeps the rest.
		func(p *timing.Phases, d time.Duration) {
			p.Decode = d
			p.Observe(latency.BackendGPULockWait, d)
			p.Observe(latency.BackendTrim, d/3)
		},
	}
	for n := range 40 {
		op := telemetry.OperationChat
		if n%7 == 3 {
			op = telemetry.OperationTextCompletion
		}
		received := now
		_, r := tel.StartRequest(context.Background(), telemetry.RequestInfo{Model: "kiln-tiny", Received: received, Stream: true, Operation: op})
		r.Phase(latency.PhaseTokenization, received, received.Add(time.Millisecond))
		ready := received.Add(time.Duration(rng.IntN(300)+1) * time.Millisecond)
		tokens := rng.IntN(30)
		for i := range tokens {
			if i > 0 {
				ready = ready.Add(gapChoices[rng.IntN(len(gapChoices))])
			}
			var ph timing.Phases
			reasons[rng.IntN(len(reasons))](&ph, ready.Sub(received)/2)
			r.Token(latency.TokenTiming{Index: i, ID: i, Ready: ready, ProducerDelivered: ready,
				HandlerReceived: ready, BodyEnqueued: ready, Phases: ph})
		}
		now = ready.Add(time.Duration(rng.IntN(50)) * time.Millisecond)
		r.End(telemetry.EndInfo{Outcome: outcomes[rng.IntN(len(outcomes))], FinishReason: "stop",
			PromptTokens: 5, CompletionTokens: tokens, Submitted: received, Admitted: received.Add(time.Millisecond),
			AdmissionDone: received.Add(2 * time.Millisecond), PrefillDone: received.Add(3 * time.Millisecond), End: now})
	}
	w := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	return w.Body.String(), spans
}

// requestFamilies are the families both hosts derive (those of docs/latency-guide.md#prometheus less kiln_active_requests, which needs a span's start).
func requestFamilies(name string) bool {
	for _, f := range []string{telemetry.MetricITL, telemetry.MetricStalls, telemetry.MetricTTFT, telemetry.MetricPhase,
		telemetry.MetricDuration, telemetry.MetricRequests, telemetry.MetricTokens} {
		if name == f {
			return true
		}
	}
	return false
}

func serverSeries(t *testing.T, exposition string) promseries.Series {
	t.Helper()
	s, err := promseries.Parse(strings.NewReader(exposition), requestFamilies, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// connectorRun feeds the exported spans to a connector counting with the
// given bounds and returns the series it emits at shutdown.
func connectorRun(t *testing.T, spans *spanCollector, bounds []float64) promseries.Series {
	t.Helper()
	sink := &consumertest.MetricsSink{}
	c := newConnector(connectortest.NewNopSettings(componentType), &Config{FlushInterval: time.Hour}, sink, bounds)
	ctx := context.Background()
	if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := c.ConsumeTraces(ctx, spans.traces()); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	all := sink.AllMetrics()
	if len(all) == 0 {
		t.Fatal("the connector emitted nothing at shutdown")
	}
	return flatten(all[len(all)-1], requestFamilies)
}

// flatten writes pdata metrics as the Prometheus samples an exporter
// shows for them (cumulative `le` buckets).
func flatten(md pmetric.Metrics, keep func(string) bool) promseries.Series {
	s := promseries.Series{}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				if keep(m.Name()) {
					flattenMetric(s, m)
				}
			}
		}
	}
	return s
}

func flattenMetric(s promseries.Series, m pmetric.Metric) {
	labels := func(a pcommon.Map) map[string]string {
		l := map[string]string{}
		a.Range(func(k string, v pcommon.Value) bool { l[k] = v.AsString(); return true })
		return l
	}
	switch m.Type() {
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		for i := range dps.Len() {
			s[promseries.Key(m.Name(), labels(dps.At(i).Attributes()))] = float64(dps.At(i).IntValue())
		}
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			l := labels(dp.Attributes())
			cum := uint64(0)
			for b := range dp.BucketCounts().Len() {
				cum += dp.BucketCounts().At(b)
				le := "+Inf"
				if b < dp.ExplicitBounds().Len() {
					le = promseries.FormatBound(dp.ExplicitBounds().At(b))
				}
				bl := map[string]string{"le": le}
				for k, v := range l {
					bl[k] = v
				}
				s[promseries.Key(m.Name()+"_bucket", bl)] = float64(cum)
			}
			s[promseries.Key(m.Name()+"_count", l)] = float64(dp.Count())
			s[promseries.Key(m.Name()+"_sum", l)] = dp.Sum()
		}
	}
}

// TestSameNumbers: a workload picked from a seed (stalls of several
// reasons, gaps on the bucket bounds, every outcome, requests without a
// token, text completions) through the server's telemetry gives exactly
// the series of its /metrics, and through the exported spans and the
// connector the same series again.
func TestSameNumbers(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, uint64(time.Now().UnixNano())} {
		exposition, spans := serverRun(t, seed)
		want := serverSeries(t, exposition)
		for _, k := range []string{`kiln_token_stalls_total{reason="actor_prefill"}`, `kiln_token_stalls_total{reason="unexplained"}`,
			`kiln_token_stalls_total{reason="training"}`, `kiln_token_stalls_total{reason="gpu_lock_wait"}`,
			`kiln_token_itl_seconds_count{}`, `kiln_request_latency_phase_seconds_count{phase="prefill"}`,
			`kiln_requests_total{status="timeout"}`, `kiln_request_ttft_seconds_count{}`} {
			if want[k] == 0 {
				t.Fatalf("seed %d: the workload has no %s:\n%s", seed, k, exposition)
			}
		}
		if len(want) < 100 {
			t.Fatalf("seed %d: only %d series:\n%s", seed, len(want), exposition)
		}
		got := connectorRun(t, spans, telemetry.Buckets())
		if diff := promseries.Diff(want, got); len(diff) > 0 {
			t.Errorf("seed %d: the connector's series differ from /metrics:\n%s", seed, strings.Join(diff, "\n"))
		}
	}
}

// TestWrongConnectorCaught: a connector with one bucket bound moved is
// caught by the same comparison.
func TestWrongConnectorCaught(t *testing.T) {
	exposition, spans := serverRun(t, 7)
	bounds := telemetry.Buckets()
	bounds[5] = 0.3 // 0.25 s moved
	got := connectorRun(t, spans, bounds)
	diff := promseries.Diff(serverSeries(t, exposition), got)
	if !cmp.Equal(true, len(diff) > 0) {
		t.Fatal("a connector with the 0.25 s bound moved to 0.3 s passed the comparison")
	}
	found := false
	for _, d := range diff {
		found = found || strings.Contains(d, `le="0.25"`)
	}
	if !found {
		t.Errorf("the diff does not name the moved bound:\n%s", strings.Join(diff, "\n"))
	}
}
