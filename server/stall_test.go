package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/telemetry"
)

// stallHold is the pause each stall test injects: above the fixed 250 ms
// Prometheus stall threshold and the adaptive one (max(250, 5 x p50) with
// a p50 of a few milliseconds on kiln-tiny), so the gap is a stall
// everywhere. It is the cause under test, not a wait for something to
// happen.
const stallHold = 320 * time.Millisecond

// streamAsync posts a streaming request and returns a channel that yields
// its whole body, plus a channel closed once the first token's chunk has
// arrived.
func (h *harness) streamAsync(body map[string]any) (first <-chan struct{}, result <-chan []byte) {
	h.t.Helper()
	b, _ := json.Marshal(body)
	firstC := make(chan struct{})
	resC := make(chan []byte, 1)
	go func() {
		var once sync.Once
		signal := func() { once.Do(func() { close(firstC) }) }
		defer signal()
		resp, err := h.ts.Client().Post(h.ts.URL+chatPath, "application/json", bytes.NewReader(b))
		if err != nil {
			h.t.Errorf("stream: %v", err)
			resC <- nil
			return
		}
		defer resp.Body.Close()
		var all bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			all.Write(buf[:n])
			if bytes.Contains(all.Bytes(), []byte(`"content"`)) {
				signal()
			}
			if err != nil {
				break
			}
		}
		resC <- all.Bytes()
	}()
	return firstC, resC
}

// slowPrefillRows is the smallest forward invocation prefillStallsStream
// makes slow: only the long prompt's one chunk has that many rows.
const slowPrefillRows = 300

// prefillStallsStream streams maxTokens tokens and, once the first has
// come, posts a prompt of at least slowPrefillRows tokens prefilled in one
// chunk that takes stallHold (the stall's cause). It returns the long
// prompt's whole answer, its prompt tokens and the stream's body to come.
func (h *harness) prefillStallsStream(t *testing.T, maxTokens int) ([]byte, int, <-chan []byte) {
	t.Helper()
	h.backend.setBefore(func(rows []llamaRow) {
		if len(rows) >= slowPrefillRows {
			time.Sleep(stallHold)
		}
	})
	first, result := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": maxTokens}))
	<-first
	long := strings.Repeat("the quick brown fox jumps over a lazy dog ", 60)
	status, _, b := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{
		"max_tokens": 1, "messages": []map[string]any{{"role": "user", "content": long}},
	}), nil)
	if status != http.StatusOK {
		t.Fatalf("long prompt: %d %s", status, b)
	}
	var r struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Usage.PromptTokens < slowPrefillRows {
		t.Fatalf("long prompt has %d tokens (%v), want >= %d", r.Usage.PromptTokens, err, slowPrefillRows)
	}
	return b, r.Usage.PromptTokens, result
}

// stallEvidence gathers, for one reason, the stalls every surface saw.
type stallEvidence struct {
	sse, summary, window, metric, span int
}

func (h *harness) stallEvidence(t *testing.T, body []byte, reason string) stallEvidence {
	t.Helper()
	p := parseStream(t, body)
	var ev stallEvidence
	prev := 0.0
	for i, e := range p.events {
		ready := num(t, e["ready_ms"])
		if i > 0 && ready-prev >= 250 && e["blocking_phase"] == reason {
			ev.sse++
			if bp := num(t, e["blocking_phase_ms"]); bp < 250/2 {
				t.Errorf("event %d: blocking_phase_ms %v is too small to explain a stall", i, bp)
			}
		}
		prev = ready
	}
	lat := perfOf(t, p.terminal)["latency"].(map[string]any)
	ev.summary = int(num(t, lat["stall_reasons"].(map[string]any)[reason]))
	var stats struct {
		StallReasons map[string]int `json:"stall_reasons"`
	}
	h.getJSON("/v1/stats/decode", &stats)
	ev.window = stats.StallReasons[reason]
	ev.metric = int(h.metricValue(t, "kiln_token_stalls_total", map[string]string{"reason": reason}))
	if h.spans != nil {
		waitSpans(t, h.spans, "POST "+chatPath)
		ev.span = stallSpans(t, h.spans)[reason]
	}
	return ev
}

// metricValue scrapes /metrics and returns the value of the counter or
// gauge sample of family with exactly the given labels (0 when absent).
func (h *harness) metricValue(t *testing.T, family string, labels map[string]string) float64 {
	t.Helper()
	body := h.getJSON("/metrics", nil)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	mf, ok := fams[family]
	if !ok {
		return 0
	}
	for _, m := range mf.GetMetric() {
		match := 0
		for _, lp := range m.GetLabel() {
			if v, ok := labels[lp.GetName()]; ok && v == lp.GetValue() {
				match++
			}
		}
		if match == len(labels) {
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// TestStallGPULockWait: an ownership holder (maintenance) pauses a decoding
// request; the gap is attributed to gpu_lock_wait identically in the SSE
// event, the summary, /v1/stats/decode and kiln_token_stalls_total.
func TestStallGPULockWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, withSpans(tracetest.NewInMemoryExporter()), withFakeTime())
		own := h.eng.Ownership()
		// Held inside the first decode step until the test has queued its
		// exclusive Lock behind it.
		entered, gate := h.holdDecode(1)
		_, result := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": 12}))
		<-entered
		locked := make(chan error, 1)
		go func() { locked <- own.Lock(context.Background()) }()
		waitFor(t, "the exclusive Lock to queue", func() bool {
			if _, exclusive := own.Waiting(); exclusive > 0 {
				return true
			}
			select {
			case err := <-locked:
				t.Fatalf("Lock returned while the actor held ownership: %v", err)
			default:
			}
			return false
		})
		close(gate)
		if err := <-locked; err != nil {
			t.Fatal(err)
		}
		time.Sleep(stallHold) // the maintenance operation: the stall's cause
		own.Unlock()
		body := <-result

		ev := h.stallEvidence(t, body, "gpu_lock_wait")
		if ev.sse < 1 || ev.sse != ev.summary || ev.sse != ev.window || ev.sse != ev.metric || ev.sse != ev.span {
			t.Errorf("gpu_lock_wait stalls: sse %d summary %d window %d metric %d span %d; want equal and >= 1", ev.sse, ev.summary, ev.window, ev.metric, ev.span)
		}

		// Blocked by what: the stall span names the ownership wait (there is
		// no maintenance span to link to) as a total and an event.
		holdMs := float64(stallHold) / 1e6
		for _, st := range stallsWithReason(h.spans.GetSpans(), "gpu_lock_wait") {
			attrs := map[string]any{}
			for _, kv := range st.Attributes {
				attrs[string(kv.Key)] = kv.Value.AsInterface()
			}
			if w, ok := attrs[telemetry.AttrBlockerLockWaitMs].(float64); !ok || w < holdMs {
				t.Errorf("stall span %s = %v, want at least the %v ms hold", telemetry.AttrBlockerLockWaitMs, attrs[telemetry.AttrBlockerLockWaitMs], holdMs)
			}
			var waits []float64
			for _, e := range st.Events {
				if e.Name != telemetry.EventBlockerLockWait {
					continue
				}
				for _, kv := range e.Attributes {
					if string(kv.Key) == telemetry.AttrBlockerDurationMs {
						waits = append(waits, kv.Value.AsFloat64())
					}
				}
				if e.Time.Before(st.StartTime) || e.Time.After(st.EndTime) {
					t.Errorf("lock wait event at %v outside the stall %v..%v", e.Time, st.StartTime, st.EndTime)
				}
			}
			if len(waits) != 1 || waits[0] < holdMs {
				t.Errorf("lock wait events with durations %v, want one of at least %v ms", waits, holdMs)
			}
			if len(st.Links) != 0 {
				t.Errorf("lock wait stall has %d links, want none", len(st.Links))
			}
		}
	})
}

// stallsWithReason returns the exported kiln.stall spans of one reason.
func stallsWithReason(spans tracetest.SpanStubs, reason string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spanNamed(spans, telemetry.SpanStall) {
		for _, kv := range s.Attributes {
			if string(kv.Key) == telemetry.AttrStallReason && kv.Value.AsString() == reason {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestStallActorPrefill: a long prompt admitted while another request
// decodes, prefilled in one chunk that takes long, stalls the decoding
// request; the gap is attributed to actor_prefill everywhere.
func TestStallActorPrefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, withSpans(tracetest.NewInMemoryExporter()), withConfig(func(c *Config) { c.Engine.PrefillChunk = 2048 }), withFakeTime())
		_, longTokens, result := h.prefillStallsStream(t, 40)
		body := <-result
		ev := h.stallEvidence(t, body, "actor_prefill")
		if ev.sse < 1 || ev.sse != ev.summary || ev.sse != ev.window || ev.sse != ev.metric || ev.sse != ev.span {
			t.Errorf("actor_prefill stalls: sse %d summary %d window %d metric %d span %d; want equal and >= 1", ev.sse, ev.summary, ev.window, ev.metric, ev.span)
		}

		// Blocked by what: every actor_prefill stall span links to the
		// long-prompt request's exported chat span.
		spans := h.spans.GetSpans()
		var longChat []tracetest.SpanStub
		for _, s := range spans {
			if !strings.HasPrefix(s.Name, telemetry.SpanChatPrefix) {
				continue
			}
			for _, kv := range s.Attributes {
				if string(kv.Key) == telemetry.AttrGenAIUsageInputTokens && kv.Value.AsInt64() == int64(longTokens) {
					longChat = append(longChat, s)
				}
			}
		}
		if len(longChat) != 1 {
			t.Fatalf("%d exported chat spans with %d input tokens, want 1", len(longChat), longTokens)
		}
		type linkView struct {
			Trace, Span string
			Kind        string
			Self        bool
			AtLeastHold bool // the linked prefill pass lasted at least the injected hold
		}
		want := linkView{Trace: longChat[0].SpanContext.TraceID().String(), Span: longChat[0].SpanContext.SpanID().String(),
			Kind: telemetry.LinkKindActorPrefill, AtLeastHold: true}
		stalls := stallsWithReason(spans, "actor_prefill")
		if len(stalls) < 1 {
			t.Fatal("no exported actor_prefill stall span")
		}
		for _, st := range stalls {
			var got []linkView
			for _, l := range st.Links {
				v := linkView{Trace: l.SpanContext.TraceID().String(), Span: l.SpanContext.SpanID().String()}
				for _, kv := range l.Attributes {
					switch string(kv.Key) {
					case telemetry.AttrLinkKind:
						v.Kind = kv.Value.AsString()
					case telemetry.AttrBlockerSelf:
						v.Self = kv.Value.AsBool()
					case telemetry.AttrBlockerDurationMs:
						v.AtLeastHold = kv.Value.AsFloat64() >= float64(stallHold)/1e6
					}
				}
				got = append(got, v)
			}
			if d := cmp.Diff([]linkView{want}, got); d != "" {
				t.Errorf("stall span %s links (-want +got):\n%s", st.SpanContext.SpanID(), d)
			}
		}
	})
}
