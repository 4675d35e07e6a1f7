package telemetry

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// Processor is the Kiln span processor: it owns the latency instruments
// and the rolling decode window, and derives the metrics of docs/latency-guide.md#prometheus from
// what it sees.
//
//   - Request-level families (TTFT, duration, phases, outcomes, the GenAI
//     histograms, the active gauge) come from the `chat {model}` spans:
//     OnStart counts a request in flight, OnEnd reads the summary
//     attributes the span ends with. The sampler records every request,
//     so OnEnd sees 100% of them whatever the export sampling.
//   - Per-token facts cannot wait for the end of a long stream and a span
//     per token would cost more than the whole budget, so Request.Token
//     hands each gap to ObserveGap directly, at once: the in-process
//     equivalent of a per-gap span. Only stalled gaps also become
//     `kiln.stall` spans, for export.
//
// Everything it computes comes from the latency core, the same code a
// Collector connector runs over the exported chat spans.
type Processor struct {
	window *latency.Window

	itl, ttft, duration, phase       metric.Float64Histogram
	genaiTTFT, genaiTPOT, genaiTotal metric.Float64Histogram
	stalls, requests, tokens         metric.Int64Counter
	active                           metric.Int64UpDownCounter

	// Precomputed options: recording with them does not allocate.
	none      []metric.RecordOption
	noneAdd   []metric.AddOption
	genai     []metric.RecordOption
	byReason  [latency.NumReasons][]metric.AddOption
	byPhase   [latency.NumPhases][]metric.RecordOption
	byOutcome [numOutcomes][]metric.AddOption

	engine atomic.Pointer[func() timing.EngineSnapshot]
	// adapter is what kiln_adapter_active and kiln_adapter_revision
	// report (adapter_metric.go); nil until the server sets it.
	adapter atomic.Pointer[adapterState]

	kvResizes *kvResizeCounter
}

var _ sdktrace.SpanProcessor = (*Processor)(nil)

// NewProcessor creates the instruments on meter (histogram buckets come
// from the provider's views) and a window of the given capacity.
func NewProcessor(meter metric.Meter, windowCapacity int) (*Processor, error) {
	p := &Processor{window: latency.NewWindow(windowCapacity)}
	var err error
	hist := func(name, desc string) metric.Float64Histogram {
		if err != nil {
			return nil
		}
		var h metric.Float64Histogram
		h, err = meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(Buckets()...))
		if err != nil {
			err = fmt.Errorf("telemetry: instrument %s: %w", name, err)
		}
		return h
	}
	counter := func(name, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = meter.Int64Counter(name, metric.WithDescription(desc))
		if err != nil {
			err = fmt.Errorf("telemetry: instrument %s: %w", name, err)
		}
		return c
	}
	// Instrument names carry no unit or _total suffix: the Prometheus
	// exporter adds them, giving exactly the documented family names (docs/latency-guide.md#prometheus).
	p.itl = hist(instITL, "Request-local inter-token gaps, live.")
	p.ttft = hist(instTTFT, "Time to first token of each completed request with a token.")
	p.phase = hist(instPhase, "Each non-null phase total of each completed request.")
	p.duration = hist(instDuration, "Whole request duration, receipt to end.")
	p.genaiTTFT = hist(MetricGenAITTFT, "GenAI: time to first token.")
	p.genaiTPOT = hist(MetricGenAITPOT, "GenAI: time per output token after the first.")
	p.genaiTotal = hist(MetricGenAIDuration, "GenAI: request duration.")
	p.stalls = counter(instStalls, "Gaps >= 250 ms (fixed threshold) by stall reason, live.")
	p.requests = counter(instRequests, "Request outcomes.")
	p.tokens = counter(instTokens, "Tokens emitted.")
	if err != nil {
		return nil, err
	}
	if p.active, err = meter.Int64UpDownCounter(MetricActive, metric.WithDescription("Requests in flight.")); err != nil {
		return nil, fmt.Errorf("telemetry: instrument %s: %w", MetricActive, err)
	}
	if err := p.registerEngine(meter); err != nil {
		return nil, err
	}
	if err := p.registerActiveAdapter(meter); err != nil {
		return nil, err
	}
	if p.kvResizes, err = newKVResizeCounter(meter); err != nil {
		return nil, err
	}

	p.none = []metric.RecordOption{}
	p.noneAdd = []metric.AddOption{}
	p.genai = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrGenAIOperationName, "chat")))}
	for r := range latency.NumReasons {
		p.byReason[r] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(LabelReason, r.String())))}
	}
	for ph := range latency.NumPhases {
		p.byPhase[ph] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(LabelPhase, ph.String())))}
	}
	for o := range numOutcomes {
		p.byOutcome[o] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(LabelStatus, o.String())))}
	}
	// Every closed-set series exists from the start, so rate() and
	// sum by (reason) see zeros rather than absent series.
	ctx := context.Background()
	for r := range latency.NumReasons {
		p.stalls.Add(ctx, 0, p.byReason[r]...)
	}
	for o := range numOutcomes {
		p.requests.Add(ctx, 0, p.byOutcome[o]...)
	}
	p.tokens.Add(ctx, 0, p.noneAdd...)
	p.active.Add(ctx, 0, p.noneAdd...)
	return p, nil
}

// Instrument names before the exporter's suffixes.
const (
	instITL      = "kiln_token_itl"
	instTTFT     = "kiln_request_ttft"
	instPhase    = "kiln_request_latency_phase"
	instDuration = "kiln_request_duration"
	instStalls   = "kiln_token_stalls"
	instRequests = "kiln_requests"
	instTokens   = "kiln_tokens_generated"
)

// Window is the rolling decode window the processor feeds.
func (p *Processor) Window() *latency.Window { return p.window }

// ObserveToken is the live per-token path: the token counter and, for a
// token that ended a gap, the ITL histogram, the fixed-threshold stall
// counter and the rolling window. ctx only carries the request's span
// context for exemplars. It does not allocate.
func (p *Processor) ObserveToken(ctx context.Context, ready time.Time, e *latency.TokenEvent) {
	p.tokens.Add(ctx, 1, p.noneAdd...)
	if !e.HasBlocking {
		return
	}
	g := e.Gap
	p.itl.Record(ctx, g.Gap.Seconds(), p.none...)
	if IsStall(g.Gap) {
		p.stalls.Add(ctx, 1, p.byReason[g.Reason]...)
	}
	p.window.Add(ready, g.Gap, g.Reason)
}

// CountRejected counts a request refused before it started.
func (p *Processor) CountRejected(ctx context.Context) {
	p.requests.Add(ctx, 1, p.byOutcome[OutcomeRejected]...)
}

// isChat reports whether s is a Kiln request span.
func isChat(s sdktrace.ReadOnlySpan) bool {
	return s.InstrumentationScope().Name == ScopeName && strings.HasPrefix(s.Name(), SpanChatPrefix)
}

// OnStart counts a request in flight.
func (p *Processor) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	if isChat(s) {
		p.active.Add(context.WithoutCancel(parent), 1, p.noneAdd...)
	}
}

// OnEnd derives the request-level metrics from a chat span's attributes
// through ObservationsFromAttributes, the derivation a Collector connector
// runs over exported spans.
func (p *Processor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !isChat(s) {
		return
	}
	ctx := trace.ContextWithSpanContext(context.Background(), s.SpanContext())
	p.active.Add(ctx, -1, p.noneAdd...)

	o := ObservationsFromAttributes(s.Attributes())
	r := o.Records()
	p.requests.Add(ctx, 1, p.byOutcome[r.Outcome]...)
	if r.Duration.Valid {
		p.duration.Record(ctx, r.Duration.V, p.none...)
		p.genaiTotal.Record(ctx, r.Duration.V, p.genai...)
	}
	if r.TTFT.Valid {
		p.ttft.Record(ctx, r.TTFT.V, p.none...)
		p.genaiTTFT.Record(ctx, r.TTFT.V, p.genai...)
	}
	if r.TPOT.Valid {
		p.genaiTPOT.Record(ctx, r.TPOT.V, p.genai...)
	}
	for ph, v := range r.Phases {
		if v.Valid {
			p.phase.Record(ctx, v.V, p.byPhase[ph]...)
		}
	}
}

// Shutdown implements sdktrace.SpanProcessor; the instruments belong to
// the meter provider, which Telemetry shuts down.
func (p *Processor) Shutdown(context.Context) error { return nil }

// ForceFlush implements sdktrace.SpanProcessor; nothing is buffered.
func (p *Processor) ForceFlush(context.Context) error { return nil }
