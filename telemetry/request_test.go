package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

func TestSpans(t *testing.T) {
	h := newHarness(t, Config{})
	// the otelhttp server span stands in as the parent
	ctx, server := h.tel.TracerProvider().Tracer("test").Start(context.Background(), "POST /v1/chat/completions")
	sum := h.runRequest(ctx, "tiny", []time.Duration{50 * msD, 70 * msD, 400 * msD},
		map[int]timing.Phases{2: {Prefill: 300 * msD, Decode: 20 * msD}}, OutcomeOK)
	server.End()

	spans := h.exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		if _, dup := byName[s.Name]; dup {
			t.Errorf("span %q twice", s.Name)
		}
		byName[s.Name] = s
	}
	chat, ok := byName["chat tiny"]
	if !ok {
		t.Fatalf("no chat span in %v", names(spans))
	}
	if chat.Parent.SpanID() != server.SpanContext().SpanID() || chat.SpanContext.TraceID() != server.SpanContext().TraceID() {
		t.Error("chat span is not a child of the server span")
	}
	type want struct{ start, end time.Duration }
	for name, w := range map[string]want{
		SpanTokenization:   {msD, 3 * msD},
		SpanActorQueue:     {4 * msD, 6 * msD},
		SpanActorAdmission: {6 * msD, 7 * msD},
		SpanActorPrefill:   {6 * msD, 20 * msD},
		SpanActorDecode:    {20 * msD, 400 * msD},
		SpanStall:          {70 * msD, 400 * msD},
	} {
		s, ok := byName[name]
		if !ok {
			t.Errorf("no %s span in %v", name, names(spans))
			continue
		}
		if s.Parent.SpanID() != chat.SpanContext.SpanID() {
			t.Errorf("%s is not a child of the chat span", name)
		}
		if !s.StartTime.Equal(at(w.start)) || !s.EndTime.Equal(at(w.end)) {
			t.Errorf("%s: %v..%v, want %v..%v", name, s.StartTime.Sub(t0), s.EndTime.Sub(t0), w.start, w.end)
		}
	}
	if len(spans) != 8 {
		t.Errorf("%d spans exported, want 8: %v", len(spans), names(spans))
	}
	if !chat.StartTime.Equal(t0) || !chat.EndTime.Equal(at(410*msD)) {
		t.Errorf("chat span %v..%v", chat.StartTime.Sub(t0), chat.EndTime.Sub(t0))
	}

	stall := attrMap(byName[SpanStall].Attributes)
	wantStall := map[string]any{
		AttrStallReason: "actor_prefill", AttrStallChosen: "actor_prefill", AttrStallGapMs: 330.0, AttrStallCandidateMs: 300.0,
		AttrStallUnexplained: 10.0, AttrStallTokenIndex: int64(2),
		AttrStallPhasePrefix + "actor_prefill_ms": 300.0, AttrStallPhasePrefix + "actor_decode_ms": 20.0,
	}
	if diff := cmp.Diff(wantStall, stall); diff != "" {
		t.Errorf("stall attributes (-want +got):\n%s", diff)
	}

	// The chat span's attributes equal the summary End returned.
	got := attrMap(chat.Attributes)
	w := map[string]any{
		AttrGenAIOperationName: "chat", AttrGenAIProviderName: ProviderName, AttrGenAIRequestModel: "tiny", AttrStream: true,
		AttrGenAIUsageInputTokens: int64(7), AttrGenAIUsageOutputTokens: int64(3),
		AttrGenAIResponseFinishReasons: []string{"stop"}, AttrStatus: "ok", AttrDurationMs: 410.0,
		AttrEmittedTokens: int64(sum.EmittedTokens), AttrGapSamples: int64(sum.GapSamples),
		AttrRetainedGapSamples: int64(sum.RetainedGapSamples), AttrGapSamplesTruncated: sum.GapSamplesTruncated,
		AttrStallCount: int64(sum.StallCount), AttrUnexplainedStallCount: int64(sum.UnexplainedStallCount),
		AttrTTFTMs: sum.TTFTMs.V, AttrITLP50Ms: sum.ITLP50Ms.V, AttrITLP99Ms: sum.ITLP99Ms.V, AttrITLP999Ms: sum.ITLP999Ms.V,
		AttrMaxITLMs: sum.MaxITLMs.V, AttrStallThresholdMs: sum.StallThresholdMs.V,
		AttrGapsMs: []float64{20, 330}, AttrGapReasons: []int64{int64(latency.ReasonUnexplained), int64(latency.ReasonActorPrefill)},
		// EndInfo.Prefix is zero: always set, the source absent.
		AttrGenAIUsageCacheReadInputTokens: int64(0), AttrPrefixCachedTokens: int64(0), AttrPrefixPrefilledTokens: int64(0),
		AttrPrefixStopReason: "off",
	}
	for r, n := range sum.StallReasons {
		if n > 0 {
			w[AttrStallReasonPrefix+latency.Reason(r).String()] = int64(n)
		}
	}
	for p, v := range sum.Phases {
		if v.Valid {
			w[AttrPhasePrefix+latency.Phase(p).Key()] = v.V
		}
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("chat attributes (-want +got):\n%s", diff)
	}
	// hand check of the summary the attributes mirror: gaps 20 and 330 ms,
	// p50 175 -> threshold 875, so no adaptive stall
	if sum.StallCount != 0 || sum.ITLP50Ms.V != 175 || sum.GapSamples != 2 || sum.TTFTMs.V != 50 {
		t.Errorf("summary %+v", sum)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

func TestEnd(t *testing.T) {
	h := newHarness(t, Config{})
	_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
	h.clock.Set(at(2 * time.Second))
	boom := errors.New("engine failed")
	s1 := r.End(EndInfo{Outcome: OutcomeError, FinishReason: "error", Err: boom, Submitted: at(msD), Admitted: at(11 * msD)})
	s2 := r.End(EndInfo{Outcome: OutcomeOK})
	if diff := cmp.Diff(s1, s2); diff != "" {
		t.Errorf("End is not idempotent (-first +second):\n%s", diff)
	}
	if ev := r.Token(tok(0, 0, timing.Phases{})); ev != (latency.TokenEvent{}) {
		t.Errorf("Token after End recorded %+v", ev)
	}
	// zero tokens: null TTFT and ITL, the queue from the engine instants
	want := latency.Summary{}
	want.Phases[latency.PhaseActorQueue] = latency.Float(10)
	if diff := cmp.Diff(want, s1); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	spans := h.exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("spans %v", names(spans))
	}
	chat := spans[1]
	if chat.Status.Code != codes.Error || len(chat.Events) != 1 || chat.Events[0].Name != "exception" {
		t.Errorf("error not on the chat span: %+v %+v", chat.Status, chat.Events)
	}
	a := attrMap(chat.Attributes)
	if _, ok := a[AttrTTFTMs]; ok {
		t.Error("null ttft_ms has an attribute")
	}
	if a[AttrStatus] != "error" {
		t.Errorf("status %v", a[AttrStatus])
	}
}

func TestTokenEventReturned(t *testing.T) {
	h := newHarness(t, Config{})
	_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0, Stream: true})
	e := r.Token(tok(0, 12*msD, timing.Phases{}))
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"object":"kiln.token_timing","source":"batching_engine","token_index":0,"token_id":100,"ready_ms":12,"producer_delivered_ms":13,"handler_received_ms":14,"body_enqueued_ms":15,"response_delivery_ms":1,"handler_queue_ms":1,"queue_delay_ms":2,"client_delivery_ms":1,"blocking_phase":null,"blocking_phase_ms":null}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	r.End(EndInfo{})
}

func TestLoggerTraceIDs(t *testing.T) {
	h := newHarness(t, Config{})
	ctx, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
	defer r.End(EndInfo{})
	log := h.tel.Logger()
	log.Info().Ctx(ctx).Msg("hello")
	traced := WithTrace(ctx, log)
	traced.Info().Msg("again")
	log.Info().Msg("no trace")
	lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("log lines %q", lines)
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d not JSON: %v", i, err)
		}
		_, has := m["trace_id"]
		if has != (i < 2) {
			t.Errorf("line %d: trace_id present %v: %s", i, has, line)
		}
	}
	if !bytes.Contains(h.logs.Bytes(), []byte(`"level":"info"`)) {
		t.Errorf("no level field: %s", h.logs)
	}
}

func TestShutdownIdempotent(t *testing.T) {
	tel, err := New(Config{}, WithLogOutput(&bytes.Buffer{}, false))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOTLPExporterStopsOnShutdown(t *testing.T) {
	for _, proto := range []string{ProtocolHTTP, ProtocolGRPC} {
		t.Run(proto, func(t *testing.T) {
			// Nothing listens on port 1. The request is not sampled, so no
			// export is attempted (a failing export retries in the
			// exporter's own background for up to its timeout): this checks
			// that building and shutting down the exporter leaves no
			// goroutine (goleak) and that New does not block on the
			// collector.
			tel, err := New(Config{OTLPTracesEndpoint: "http://127.0.0.1:1/v1/traces", OTLPProtocol: proto, Sampler: SamplerAlwaysOff},
				WithLogOutput(&bytes.Buffer{}, false))
			if err != nil {
				t.Fatal(err)
			}
			_, r := tel.StartRequest(context.Background(), RequestInfo{Model: "m"})
			r.End(EndInfo{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
