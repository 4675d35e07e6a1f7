package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// RequestInfo describes a request at its start.
type RequestInfo struct {
	Model    string    // the requested model id: a span attribute, never a label
	Received time.Time // request receipt: the instant every *_ms counts from
	Stream   bool
}

// EndInfo describes how a request ended.
type EndInfo struct {
	Outcome          Outcome
	FinishReason     string // stop, length, error, timeout, client_disconnect
	PromptTokens     int
	CompletionTokens int
	// Engine instants (engine.Result); zero when unknown.
	Submitted, Admitted, PrefillDone time.Time
	Err                              error
}

// Request is the telemetry of one request: its `chat {model}` span and
// its latency tracker. Its methods are called from the request's handler
// goroutine only.
type Request struct {
	t    *Telemetry
	span trace.Span
	// exemplar is a value-only context (no deadline, no cancellation)
	// carrying the chat span's context, built once so that per-token
	// recordings attach exemplars without allocating. It is not the
	// request's context.
	exemplar context.Context
	stream   bool
	tr       latency.Tracker
	ended    bool
	summary  latency.Summary
}

var phaseSpanNames = func() (n [latency.NumPhases]string) {
	for p := range latency.NumPhases {
		n[p] = "kiln." + p.String()
	}
	return n
}()

// StartRequest starts the request's `chat {model}` span as a child of
// ctx's span (the otelhttp server span) and returns the context carrying
// it.
func (t *Telemetry) StartRequest(ctx context.Context, info RequestInfo) (context.Context, *Request) {
	received := info.Received
	if received.IsZero() {
		received = t.now()
	}
	ctx, span := t.tracer.Start(ctx, SpanChatPrefix+info.Model,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(received),
		trace.WithAttributes(
			attribute.String(AttrGenAIOperationName, "chat"),
			attribute.String(AttrGenAIRequestModel, info.Model),
			attribute.Bool(AttrStream, info.Stream),
		))
	r := &Request{
		t:        t,
		span:     span,
		exemplar: trace.ContextWithSpanContext(context.Background(), span.SpanContext()),
		stream:   info.Stream,
	}
	r.tr.Reset(received)
	return ctx, r
}

// Phase records a phase the server measured itself (tokenization): a
// `kiln.<phase>` span with the real instants and the phase's summary
// total.
func (r *Request) Phase(p latency.Phase, start, end time.Time) {
	if r.ended || p >= latency.NumPhases {
		return
	}
	r.tr.AddPhase(p, end.Sub(start))
	r.child(phaseSpanNames[p], start, end)
}

// child emits a finished child span of the chat span.
func (r *Request) child(name string, start, end time.Time, attrs ...attribute.KeyValue) {
	if !r.span.IsRecording() {
		return
	}
	if end.Before(start) {
		end = start
	}
	ctx := trace.ContextWithSpan(context.Background(), r.span)
	_, s := r.t.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	s.End(trace.WithTimestamp(end))
}

// Token records one emitted token and returns its SSE timing event. It
// feeds the live metrics at once (token counter, ITL histogram, stall
// counter, rolling window) and, for a gap of at least 250 ms, emits a
// `kiln.stall` span from the previous token's ready instant to this one's.
func (r *Request) Token(tt latency.TokenTiming) latency.TokenEvent {
	if r.ended {
		return latency.TokenEvent{}
	}
	e := r.tr.Observe(tt)
	r.t.proc.ObserveToken(r.exemplar, tt.Ready, &e)
	if e.HasBlocking && e.Gap.Gap >= latency.StallThreshold {
		r.stall(tt, &e)
	}
	return e
}

// stall emits the stall span with the reason, the gap and every non-zero
// candidate duration.
func (r *Request) stall(tt latency.TokenTiming, e *latency.TokenEvent) {
	if !r.span.IsRecording() {
		return
	}
	g := e.Gap
	p := &tt.Phases
	attrs := []attribute.KeyValue{
		attribute.String(AttrStallReason, g.Reason.String()),
		attribute.String(AttrStallChosen, g.Chosen.String()),
		attribute.Float64(AttrStallGapMs, msOf(g.Gap)),
		attribute.Float64(AttrStallCandidateMs, msOf(g.Candidate)),
		attribute.Float64(AttrStallUnexplained, msOf(g.Unexplained)),
		attribute.Int(AttrStallTokenIndex, tt.Index),
	}
	add := func(r latency.Reason, d time.Duration) {
		if d > 0 {
			attrs = append(attrs, attribute.Float64(AttrStallPhasePrefix+r.String()+"_ms", msOf(d)))
		}
	}
	add(latency.ReasonActorQueue, p.ActorQueue)
	add(latency.ReasonActorAdmission, p.Admission)
	add(latency.ReasonActorPrefill, p.Prefill)
	add(latency.ReasonActorDecode, p.Decode)
	add(latency.ReasonActorCycleIdle, p.CycleIdle)
	add(latency.ReasonResponseDelivery, p.ResponseDelivery)
	for s := range latency.NumSlots {
		if p.Has(s) {
			add(latency.ReasonSampling+latency.Reason(s), p.Slots[s])
		}
	}
	end := tt.Ready
	r.child(SpanStall, end.Add(-g.Gap), end, attrs...)
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// End ends the request: the engine's phase spans (`kiln.actor_queue`,
// `kiln.actor_prefill`) with their real instants, the chat span with the
// summary and the retained gaps as attributes (the processor derives the
// request metrics from them), and returns the summary. It is idempotent:
// later calls return the first summary.
//
// For a request that emitted no token, the engine instants are the only
// evidence of its queue and prefill, so they become the actor_queue and
// prefill totals; with tokens, those totals come from the tokens' phases.
func (r *Request) End(info EndInfo) latency.Summary {
	if r.ended {
		return r.summary
	}
	r.ended = true
	end := r.t.now()
	hasQueue := !info.Submitted.IsZero() && !info.Admitted.IsZero()
	hasPrefill := !info.Admitted.IsZero() && !info.PrefillDone.IsZero()
	if r.tr.Emitted() == 0 {
		if hasQueue {
			r.tr.AddPhase(latency.PhaseActorQueue, info.Admitted.Sub(info.Submitted))
		}
		if hasPrefill {
			r.tr.AddPhase(latency.PhasePrefill, info.PrefillDone.Sub(info.Admitted))
		}
	}
	if hasQueue {
		r.child(SpanActorQueue, info.Submitted, info.Admitted)
	}
	if hasPrefill {
		r.child(SpanActorPrefill, info.Admitted, info.PrefillDone)
	}
	s := r.tr.Summary()
	r.summary = s
	if r.span.IsRecording() {
		r.span.SetAttributes(r.summaryAttributes(&s, info, end)...)
		if info.Err != nil {
			r.span.RecordError(info.Err)
		}
		if info.Outcome != OutcomeOK {
			msg := info.Outcome.String()
			if info.Err != nil {
				msg = info.Err.Error()
			}
			r.span.SetStatus(codes.Error, msg)
		}
	}
	r.span.End(trace.WithTimestamp(end))
	return s
}

// summaryAttributes is the chat span's end state (names.go documents
// each).
func (r *Request) summaryAttributes(s *latency.Summary, info EndInfo, end time.Time) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 64)
	a = append(a,
		attribute.Int(AttrGenAIUsageInputTokens, info.PromptTokens),
		attribute.Int(AttrGenAIUsageOutputTokens, info.CompletionTokens),
		attribute.String(AttrStatus, info.Outcome.String()),
		attribute.Float64(AttrDurationMs, msOf(max(end.Sub(r.tr.Received()), 0))),
		attribute.Int(AttrEmittedTokens, s.EmittedTokens),
		attribute.Int(AttrGapSamples, s.GapSamples),
		attribute.Int(AttrRetainedGapSamples, s.RetainedGapSamples),
		attribute.Bool(AttrGapSamplesTruncated, s.GapSamplesTruncated),
		attribute.Int(AttrStallCount, s.StallCount),
		attribute.Int(AttrUnexplainedStallCount, s.UnexplainedStallCount),
	)
	if info.FinishReason != "" {
		a = append(a, attribute.StringSlice(AttrGenAIResponseFinishReasons, []string{info.FinishReason}))
	}
	for _, f := range []struct {
		k string
		v latency.NullFloat
	}{
		{AttrTTFTMs, s.TTFTMs}, {AttrITLP50Ms, s.ITLP50Ms}, {AttrITLP99Ms, s.ITLP99Ms},
		{AttrITLP999Ms, s.ITLP999Ms}, {AttrMaxITLMs, s.MaxITLMs}, {AttrStallThresholdMs, s.StallThresholdMs},
	} {
		if f.v.Valid {
			a = append(a, attribute.Float64(f.k, f.v.V))
		}
	}
	for reason, n := range s.StallReasons {
		if n > 0 {
			a = append(a, attribute.Int(AttrStallReasonPrefix+latency.Reason(reason).String(), n))
		}
	}
	for p, v := range s.Phases {
		if v.Valid {
			a = append(a, attribute.Float64(AttrPhasePrefix+latency.Phase(p).Key(), v.V))
		}
	}
	gaps, reasons := r.tr.AppendGaps(make([]float64, 0, s.RetainedGapSamples), make([]int64, 0, s.RetainedGapSamples))
	a = append(a, attribute.Float64Slice(AttrGapsMs, gaps), attribute.Int64Slice(AttrGapReasons, reasons))
	return a
}
