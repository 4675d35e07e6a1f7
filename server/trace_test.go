package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/telemetry"
)

func withSpans(exp *tracetest.InMemoryExporter) harnessOption {
	return func(s *harnessSetup) {
		s.topts = append(s.topts, telemetry.WithSpanExporter(exp))
		s.spans = exp
	}
}

// tracedHarness is a harness whose sampled spans reach the returned
// in-memory exporter.
func tracedHarness(t *testing.T) (*harness, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	return newHarness(t, withSpans(exp)), exp
}

// waitSpans returns the exported spans once one named name has ended (the
// otelhttp server span ends after the handler returns, just after the
// client has the whole response).
func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStubs {
	t.Helper()
	var spans tracetest.SpanStubs
	waitFor(t, "a "+name+" span's export", func() bool {
		spans = exp.GetSpans()
		return slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool { return s.Name == name })
	})
	return spans
}

func spanNamed(spans tracetest.SpanStubs, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// TestTraceContract: one trace per request under the client's traceparent;
// the HTTP server span is the parent of `chat {model}`, which parents the
// phase spans; the chat span's summary attributes equal the response's
// metadata.performance.latency.
func TestTraceContract(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	h := newHarness(t, withSpans(exp))
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"include_performance": true}),
		map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	spans := waitSpans(t, exp, "POST "+chatPath)
	httpSpan := spanNamed(spans, "POST "+chatPath)[0]
	if got := httpSpan.SpanContext.TraceID().String(); got != traceID {
		t.Errorf("trace id %s, want the client's %s", got, traceID)
	}
	if got := httpSpan.Parent.SpanID().String(); got != parentID || !httpSpan.Parent.IsRemote() {
		t.Errorf("HTTP span parent %s (remote %v), want the client's %s", got, httpSpan.Parent.IsRemote(), parentID)
	}
	chats := spanNamed(spans, telemetry.SpanChatPrefix+h.model.ID)
	if len(chats) != 1 {
		t.Fatalf("%d chat spans", len(chats))
	}
	chat := chats[0]
	if chat.Parent.SpanID() != httpSpan.SpanContext.SpanID() {
		t.Errorf("chat span parent %s, want the HTTP span %s", chat.Parent.SpanID(), httpSpan.SpanContext.SpanID())
	}
	for _, name := range []string{telemetry.SpanTokenization, telemetry.SpanActorQueue, telemetry.SpanActorAdmission, telemetry.SpanActorPrefill, telemetry.SpanActorDecode} {
		ss := spanNamed(spans, name)
		if len(ss) != 1 {
			t.Errorf("%d %s spans, want 1", len(ss), name)
			continue
		}
		if ss[0].Parent.SpanID() != chat.SpanContext.SpanID() {
			t.Errorf("%s parent %s, want the chat span", name, ss[0].Parent.SpanID())
		}
	}

	// Summary attributes equal the response's summary.
	var resp struct {
		Metadata struct {
			Performance struct {
				Latency map[string]any `json:"latency"`
			} `json:"performance"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	lat := resp.Metadata.Performance.Latency
	attrs := map[string]any{}
	for _, kv := range chat.Attributes {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	for key, attr := range map[string]string{
		"emitted_tokens": telemetry.AttrEmittedTokens, "gap_samples": telemetry.AttrGapSamples,
		"retained_gap_samples": telemetry.AttrRetainedGapSamples, "gap_samples_truncated": telemetry.AttrGapSamplesTruncated,
		"ttft_ms": telemetry.AttrTTFTMs, "itl_ms_p50": telemetry.AttrITLP50Ms, "itl_ms_p99": telemetry.AttrITLP99Ms,
		"itl_ms_p999": telemetry.AttrITLP999Ms, "max_itl_ms": telemetry.AttrMaxITLMs,
		"stall_threshold_ms": telemetry.AttrStallThresholdMs, "stall_count": telemetry.AttrStallCount,
		"unexplained_stall_count": telemetry.AttrUnexplainedStallCount,
	} {
		want, got := lat[key], attrs[attr]
		if want == nil {
			if got != nil {
				t.Errorf("%s = %v, but the response's %s is null", attr, got, key)
			}
			continue
		}
		if !sameNumber(want, got) {
			t.Errorf("%s = %v (%T), response %s = %v", attr, got, got, key, want)
		}
	}
	for key, v := range lat["phases"].(map[string]any) {
		got, ok := attrs[telemetry.AttrPhasePrefix+key]
		if (v == nil) == ok || (v != nil && !sameNumber(v, got)) {
			t.Errorf("phase %s: attribute %v (present %v), response %v", key, got, ok, v)
		}
	}
}

// sameNumber compares a JSON value with an attribute value.
func sameNumber(j, a any) bool {
	switch x := a.(type) {
	case int64:
		f, ok := j.(float64)
		return ok && f == float64(x)
	case float64:
		f, ok := j.(float64)
		return ok && f == x
	case bool:
		b, ok := j.(bool)
		return ok && b == x
	}
	return false
}

// stallSpans returns the exported kiln.stall spans with their reason,
// checking each is a child of a chat span of the same trace.
func stallSpans(t *testing.T, exp *tracetest.InMemoryExporter) map[string]int {
	t.Helper()
	spans := exp.GetSpans()
	chats := map[trace.SpanID]bool{}
	for _, s := range spans {
		if len(s.Name) > len(telemetry.SpanChatPrefix) && s.Name[:len(telemetry.SpanChatPrefix)] == telemetry.SpanChatPrefix {
			chats[s.SpanContext.SpanID()] = true
		}
	}
	out := map[string]int{}
	for _, s := range spanNamed(spans, telemetry.SpanStall) {
		if !chats[s.Parent.SpanID()] {
			t.Errorf("stall span %s has parent %s, not a chat span", s.SpanContext.SpanID(), s.Parent.SpanID())
		}
		for _, kv := range s.Attributes {
			if string(kv.Key) == telemetry.AttrStallReason {
				out[kv.Value.AsString()]++
			}
		}
	}
	return out
}

// TestPrefixCacheSpanAttributes: the chat span carries the GenAI
// cache-read count and Kiln's four prefix-cache facts, the source absent
// when nothing was reused.
func TestPrefixCacheSpanAttributes(t *testing.T) {
	for _, pu := range prefixUses {
		t.Run(pu.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			h := newHarness(t, withSpans(exp), withPrefixUse(pu.use))
			status, _, raw := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"max_tokens": 2}), nil)
			if status != http.StatusOK {
				t.Fatalf("HTTP %d: %s", status, raw)
			}
			var resp struct {
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatal(err)
			}
			chats := spanNamed(waitSpans(t, exp, "POST "+chatPath), telemetry.SpanChatPrefix+h.model.ID)
			if len(chats) != 1 {
				t.Fatalf("%d chat spans", len(chats))
			}
			got := map[string]any{}
			for _, kv := range chats[0].Attributes {
				switch k := string(kv.Key); k {
				case telemetry.AttrGenAIUsageCacheReadInputTokens, telemetry.AttrPrefixCachedTokens, telemetry.AttrPrefixPrefilledTokens,
					telemetry.AttrPrefixSource, telemetry.AttrPrefixStopReason:
					got[k] = kv.Value.AsInterface()
				}
			}
			w := pu.want(resp.Usage.PromptTokens)
			want := map[string]any{
				telemetry.AttrGenAIUsageCacheReadInputTokens: int64(w["cached_tokens"].(float64)),
				telemetry.AttrPrefixCachedTokens:             int64(w["cached_tokens"].(float64)),
				telemetry.AttrPrefixPrefilledTokens:          int64(w["prefilled_tokens"].(float64)),
				telemetry.AttrPrefixStopReason:               w["stop_reason"],
			}
			if w["source"] != nil {
				want[telemetry.AttrPrefixSource] = w["source"]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("prefix-cache attributes (-want +got):\n%s", diff)
			}
		})
	}
}
