package telemetry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

var t0 = time.Unix(1_700_000_000, 0)

func at(d time.Duration) time.Time { return t0.Add(d) }

const msD = time.Millisecond

type harness struct {
	tel   *Telemetry
	exp   *tracetest.InMemoryExporter
	rec   *tracetest.SpanRecorder
	clock *fakeClock
	logs  *bytes.Buffer
}

func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	h := &harness{exp: tracetest.NewInMemoryExporter(), rec: tracetest.NewSpanRecorder(), clock: &fakeClock{t: t0}, logs: &bytes.Buffer{}}
	tel, err := New(cfg, WithSpanExporter(h.exp), WithSpanProcessor(h.rec), WithClock(h.clock.Now), WithLogOutput(h.logs, false))
	if err != nil {
		t.Fatal(err)
	}
	h.tel = tel
	t.Cleanup(func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return h
}

// scrape returns the /metrics body for the given Accept header.
func (h *harness) scrape(t testing.TB, accept string) string {
	t.Helper()
	return withoutRuntimeFamilies(h.scrapeAll(t, accept))
}

// withoutRuntimeFamilies drops the process_*, go_* and kiln_build_info
// families, whose values (and build labels) differ from run to run, so the
// rest of the exposition can be compared with a golden file.
func withoutRuntimeFamilies(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		name := line
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name = rest
		} else if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name = rest
		}
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, BuildInfoMetric) {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// scrapeAll is the whole /metrics exposition.
func (h *harness) scrapeAll(t testing.TB, accept string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.tel.MetricsHandler().ServeHTTP(w, req)
	b, _ := io.ReadAll(w.Result().Body)
	if w.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", w.Code, b)
	}
	return string(b)
}

// tok is a streamed token ready at r with hops of 1 ms each.
func tok(i int, r time.Duration, p timing.Phases) latency.TokenTiming {
	return latency.TokenTiming{Index: i, ID: 100 + i, Ready: at(r), ProducerDelivered: at(r + msD),
		HandlerReceived: at(r + 2*msD), BodyEnqueued: at(r + 3*msD), Phases: p}
}

// runRequest plays a request: tokens ready at the given instants (the
// gap ending at readies[k] gets phases[k] when given), then End at the
// last token + 10 ms.
func (h *harness) runRequest(ctx context.Context, model string, readies []time.Duration, phases map[int]timing.Phases, outcome Outcome) latency.Summary {
	_, r := h.tel.StartRequest(ctx, RequestInfo{Model: model, Received: t0, Stream: true})
	r.Phase(latency.PhaseTokenization, at(msD), at(3*msD))
	last := time.Duration(0)
	for i, rd := range readies {
		r.Token(tok(i, rd, phases[i]))
		last = rd
	}
	h.clock.Set(at(last + 10*msD))
	return r.End(EndInfo{Outcome: outcome, FinishReason: "stop", PromptTokens: 7, CompletionTokens: len(readies),
		Submitted: at(4 * msD), Admitted: at(6 * msD), AdmissionDone: at(7 * msD), PrefillDone: at(20 * msD)})
}
