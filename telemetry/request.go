package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// RequestInfo describes a request at its start.
type RequestInfo struct {
	Model    string    // the requested model id: a span attribute, never a label
	Received time.Time // request receipt: the instant every *_ms counts from
	Stream   bool
	// ID is the request's identity from Telemetry.NewRequestID; 0 assigns
	// a fresh one. Other requests' blockers name it (stall links).
	ID uint64
	// Operation is gen_ai.operation.name: OperationChat (when empty) or
	// OperationTextCompletion; the span is "{operation} {model}".
	Operation string
	// API is the wire format the request came in (an API* name,
	// kiln.request.api); empty leaves the attribute out.
	API string
}

// EndInfo describes how a request ended.
type EndInfo struct {
	Outcome          Outcome
	FinishReason     string // stop, length, error, timeout, client_disconnect
	PromptTokens     int
	CompletionTokens int
	// Engine instants (engine.Result); zero when unknown.
	Submitted, Admitted, AdmissionDone, PrefillDone time.Time
	// Prefix is what the prompt reused from the prefix cache
	// (engine.Result.Prefix).
	Prefix timing.PrefixUse
	Err    error
	// End is the request's end, read once by the caller from the clock
	// of its other instants; zero reads the telemetry's clock.
	End time.Time
}

// Request is the telemetry of one request: its `chat {model}` span and
// its latency tracker. Its methods are called from the request's handler
// goroutine only.
type Request struct {
	t    *Telemetry
	id   uint64
	span trace.Span
	// exemplar is a value-only context (no deadline, no cancellation)
	// carrying the chat span's context, built once so that per-token
	// recordings attach exemplars without allocating. It is not the
	// request's context.
	exemplar context.Context
	stream   bool
	tr       latency.Tracker // also the first and last token instants
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
// it. The request's identity (info.ID, or a fresh one) resolves to the
// chat span's context from now until 256 more requests have ended, so the
// stall spans of requests it delays link to it.
func (t *Telemetry) StartRequest(ctx context.Context, info RequestInfo) (context.Context, *Request) {
	received := info.Received
	if received.IsZero() {
		received = t.now()
	}
	op := info.Operation
	if op == "" {
		op = OperationChat
	}
	ctx, span := t.tracer.Start(ctx, op+" "+info.Model,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(received),
		trace.WithAttributes(
			attribute.String(AttrGenAIOperationName, op),
			attribute.String(AttrGenAIProviderName, ProviderName),
			attribute.String(AttrGenAIRequestModel, info.Model),
			attribute.Bool(AttrStream, info.Stream),
		))
	if info.API != "" {
		span.SetAttributes(attribute.String(AttrAPI, info.API))
	}
	id := info.ID
	if id == 0 {
		id = t.NewRequestID()
	}
	t.reqs.add(id, span.SpanContext())
	r := &Request{
		t:        t,
		id:       id,
		span:     span,
		exemplar: trace.ContextWithSpanContext(context.Background(), span.SpanContext()),
		stream:   info.Stream,
	}
	r.tr.Reset(received)
	return ctx, r
}

// ID is the request's identity (never 0): pass it to the engine
// (engine.Request.ID) so that the blockers it reports name this request.
func (r *Request) ID() uint64 { return r.id }

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
	r.startChild(name, start, trace.WithAttributes(attrs...)).End(trace.WithTimestamp(timing.Later(end, start)))
}

// startChild starts a child span of the chat span at start.
func (r *Request) startChild(name string, start time.Time, opts ...trace.SpanStartOption) trace.Span {
	ctx := trace.ContextWithSpan(context.Background(), r.span)
	opts = append(opts, trace.WithTimestamp(start))
	_, s := r.t.tracer.Start(ctx, name, opts...)
	return s
}

// Token records one emitted token and returns its SSE timing event. It
// feeds the live metrics at once (token counter, ITL histogram, stall
// counter, rolling window) and, for a gap of at least 250 ms, emits a
// `kiln.stall` span from the previous token's ready instant to this one's,
// linked to the chat spans of the requests whose prefill blocked it
// (tt.Blockers). Only the stall path allocates.
func (r *Request) Token(tt latency.TokenTiming) latency.TokenEvent {
	if r.ended {
		return latency.TokenEvent{}
	}
	e := r.tr.Observe(tt)
	r.t.proc.ObserveToken(r.exemplar, tt.Ready, &e)
	if e.Stall() {
		r.stall(tt, &e)
	}
	if tt.Index == 0 {
		r.linkBarriers(tt.Blockers)
	}
	return e
}

// linkBarriers links the chat span to each barrier operation (KV resize,
// adapter swap) the request waited behind for admission: its first
// token's operation blockers of those kinds, by identity.
func (r *Request) linkBarriers(bs []latency.Blocker) {
	if !r.span.IsRecording() {
		return
	}
	received := r.tr.Received()
	for _, b := range bs {
		if b.Kind != latency.BlockerOperation || (b.OpKind != timing.OpResize && b.OpKind != timing.OpAdapterSwap) {
			continue
		}
		if sc, kind, ok := r.t.operationLink(b.Op); ok {
			r.span.AddLink(operationLink(sc, kind, b, received))
		}
	}
}

// operationLink is a link to an operation's span from a span it delayed
// by b.
func operationLink(sc trace.SpanContext, kind timing.OpKind, b latency.Blocker, received time.Time) trace.Link {
	return trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
		attribute.String(AttrLinkKind, kind.String()),
		attribute.Int64(AttrOperationID, int64(b.Op)),
		attribute.Float64(AttrBlockerStartOffsetMs, timing.Ms(b.Start.Sub(received))),
		attribute.Float64(AttrBlockerDurationMs, timing.Ms(b.Duration())),
	}}
}

// TokenReady returns the ready instants of the request's first and
// latest token (zero before the first), as its latency tracker keeps them.
func (r *Request) TokenReady() (first, last time.Time) {
	return r.tr.FirstReady(), r.tr.LastReady()
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
		attribute.Float64(AttrStallGapMs, timing.Ms(g.Gap)),
		attribute.Float64(AttrStallCandidateMs, timing.Ms(g.Candidate)),
		attribute.Float64(AttrStallUnexplained, timing.Ms(g.Unexplained)),
		attribute.Int(AttrStallTokenIndex, tt.Index),
	}
	add := func(r latency.Reason, d time.Duration) {
		if d > 0 {
			attrs = append(attrs, attribute.Float64(AttrStallPhasePrefix+r.String()+"_ms", timing.Ms(d)))
		}
	}
	add(latency.ReasonActorQueue, p.ActorQueue)
	add(latency.ReasonActorAdmission, p.Admission)
	add(latency.ReasonActorPrefill, p.Prefill)
	add(latency.ReasonActorDecode, p.Decode)
	add(latency.ReasonActorCycleIdle, p.CycleIdle)
	add(latency.ReasonResponseDelivery, p.ResponseDelivery)
	for s := range latency.NumBackendPhases {
		if p.Has(s) {
			add(latency.BackendReason(s), p.Backend[s])
		}
	}
	end := tt.Ready
	links, attrs, waits := r.blockerLinks(tt.Blockers, attrs)
	s := r.startChild(SpanStall, end.Add(-g.Gap), trace.WithAttributes(attrs...), trace.WithLinks(links...))
	for _, b := range waits {
		s.AddEvent(EventBlockerLockWait, trace.WithTimestamp(b.Start), trace.WithAttributes(
			attribute.Float64(AttrBlockerStartOffsetMs, timing.Ms(b.Start.Sub(r.tr.Received()))),
			attribute.Float64(AttrBlockerDurationMs, timing.Ms(b.Duration())),
		))
	}
	s.End(trace.WithTimestamp(end))
}

// blockerLinks turns a stalled token's blockers into the stall span's
// evidence: a link to the chat span of each prefill blocker's request that
// still resolves (in flight or among the recently ended), the count of
// those that do not, the total of the lock waits with the waits
// themselves (each becomes a span event), and a link to each maintenance
// operation (kiln.trim, ...) whose hold overlapped a lock wait.
func (r *Request) blockerLinks(bs []latency.Blocker, attrs []attribute.KeyValue) ([]trace.Link, []attribute.KeyValue, []latency.Blocker) {
	var (
		links      []trace.Link
		waits      []latency.Blocker
		lockWait   time.Duration
		unresolved int
	)
	received := r.tr.Received()
	for _, b := range bs {
		d := b.Duration()
		switch b.Kind {
		case latency.BlockerPrefill:
			sc, ok := r.t.reqs.lookup(b.Request)
			if b.Request == 0 || !ok {
				unresolved++
				continue
			}
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
				attribute.String(AttrLinkKind, LinkKindActorPrefill),
				attribute.Float64(AttrBlockerStartOffsetMs, timing.Ms(b.Start.Sub(received))),
				attribute.Float64(AttrBlockerDurationMs, timing.Ms(d)),
				attribute.Bool(AttrBlockerSelf, b.Request == r.id),
			}})
		case latency.BlockerLockWait:
			lockWait += d
			waits = append(waits, b)
		case latency.BlockerOperation:
			if sc, kind, ok := r.t.operationLink(b.Op); ok && !linked(links, sc) {
				links = append(links, operationLink(sc, kind, b, received))
			}
		}
	}
	if len(waits) > 0 {
		attrs = append(attrs, attribute.Float64(AttrBlockerLockWaitMs, timing.Ms(lockWait)))
	}
	if unresolved > 0 {
		attrs = append(attrs, attribute.Int(AttrBlockerUnresolved, unresolved))
	}
	return links, attrs, waits
}

// End ends the request: the engine's phase spans (`kiln.actor_queue`,
// `kiln.actor_admission`, `kiln.actor_prefill`, `kiln.actor_decode`) with
// their real instants, the chat span with the summary and the retained
// gaps as attributes (the processor derives the request metrics from
// them), and returns the summary. It is idempotent: later calls return the
// first summary. Its identity stays resolvable for links until 256 more
// requests have ended.
//
// For a request that emitted no token, the engine instants are the only
// evidence of its queue, admission and prefill, so they become those
// phases' totals; with tokens, the totals come from the tokens' phases.
func (r *Request) End(info EndInfo) latency.Summary {
	if r.ended {
		return r.summary
	}
	r.ended = true
	end := info.End
	if end.IsZero() {
		end = r.t.now()
	}
	defer r.t.reqs.end(r.id)
	hasQueue := !info.Submitted.IsZero() && !info.Admitted.IsZero()
	hasAdmission := !info.Admitted.IsZero() && !info.AdmissionDone.IsZero()
	hasPrefill := !info.Admitted.IsZero() && !info.PrefillDone.IsZero()
	hasDecode := !info.PrefillDone.IsZero() && r.tr.Emitted() > 0 && !r.tr.LastReady().Before(info.PrefillDone)
	if r.tr.Emitted() == 0 {
		if hasQueue {
			r.tr.AddPhase(latency.PhaseActorQueue, info.Admitted.Sub(info.Submitted))
		}
		if hasAdmission {
			r.tr.AddPhase(latency.PhaseActorAdmission, info.AdmissionDone.Sub(info.Admitted))
		}
		if hasPrefill {
			r.tr.AddPhase(latency.PhasePrefill, info.PrefillDone.Sub(info.Admitted))
		}
	}
	if hasQueue {
		r.child(SpanActorQueue, info.Submitted, info.Admitted)
	}
	if hasAdmission {
		r.child(SpanActorAdmission, info.Admitted, info.AdmissionDone)
	}
	if hasPrefill {
		r.child(SpanActorPrefill, info.Admitted, info.PrefillDone)
	}
	if hasDecode {
		r.child(SpanActorDecode, info.PrefillDone, r.tr.LastReady())
	}
	s := r.tr.Summary()
	r.summary = s
	if r.span.IsRecording() {
		r.span.SetAttributes(r.summaryAttributes(&s, info, end)...)
		if info.Err != nil {
			r.span.RecordError(info.Err)
		}
		if info.Outcome != OutcomeOK {
			r.span.SetAttributes(attribute.String(AttrErrorType, info.Outcome.String()))
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
	gaps, reasons := r.tr.AppendGaps(make([]float64, 0, s.RetainedGapSamples), make([]int64, 0, s.RetainedGapSamples))
	return endAttributes(s, info, timing.Elapsed(r.tr.Received(), end), gaps, reasons)
}

// endAttributes are the attributes a chat span ends with: the outcome,
// usage and duration of info and dur, the summary s, and the retained gaps
// (ms) with their reasons. ObservationsFromAttributes reads them back.
func endAttributes(s *latency.Summary, info EndInfo, dur time.Duration, gaps []float64, reasons []int64) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 64)
	a = append(a,
		attribute.Int(AttrGenAIUsageInputTokens, info.PromptTokens),
		attribute.Int(AttrGenAIUsageOutputTokens, info.CompletionTokens),
		attribute.String(AttrStatus, info.Outcome.String()),
		attribute.Float64(AttrDurationMs, timing.Ms(dur)),
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
	for _, f := range summaryFloats(s) {
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
	a = appendPrefixAttributes(a, info.Prefix)
	a = append(a, attribute.Float64Slice(AttrGapsMs, gaps), attribute.Int64Slice(AttrGapReasons, reasons))
	return a
}

// appendPrefixAttributes appends what the prompt took from the prefix
// cache: the GenAI conventions' cache-read count and Kiln's four facts
// (the prefix_cache object of metadata.performance). The source is absent
// when nothing was reused, as it is null there.
func appendPrefixAttributes(a []attribute.KeyValue, u timing.PrefixUse) []attribute.KeyValue {
	a = append(a,
		attribute.Int(AttrGenAIUsageCacheReadInputTokens, u.Cached),
		attribute.Int(AttrPrefixCachedTokens, u.Cached),
		attribute.Int(AttrPrefixPrefilledTokens, u.Prefilled),
		attribute.String(AttrPrefixStopReason, u.Stop.String()),
	)
	if src := u.Source.String(); u.Cached > 0 && src != "" {
		a = append(a, attribute.String(AttrPrefixSource, src))
	}
	return a
}

// linked reports whether links already has one to sc.
func linked(links []trace.Link, sc trace.SpanContext) bool {
	for _, l := range links {
		if l.SpanContext.Equal(sc) {
			return true
		}
	}
	return false
}

// Choice records the choice index of a request with n > 1 choices.
func (r *Request) Choice(i int) {
	if !r.ended && r.span.IsRecording() {
		r.span.SetAttributes(attribute.Int(AttrChoiceIndex, i))
	}
}
