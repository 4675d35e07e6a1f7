package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const tol = 1e-6 // ms: float rounding of differences of the same instants

var eventKeys = []string{
	"blocking_phase", "blocking_phase_ms", "body_enqueued_ms", "client_delivery_ms", "handler_queue_ms",
	"handler_received_ms", "object", "producer_delivered_ms", "queue_delay_ms", "ready_ms",
	"response_delivery_ms", "source", "token_id", "token_index",
}

func keys(m map[string]any) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func perfOf(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	meta, ok := m["metadata"].(map[string]any)
	if !ok {
		t.Fatalf("no metadata in %v", m)
	}
	perf, ok := meta["performance"].(map[string]any)
	if !ok {
		t.Fatalf("no metadata.performance in %v", m)
	}
	return perf
}

// TestStreamWithPerformance: with include_performance true, every token's
// content chunk is followed by its timing event, the events obey docs/latency-guide.md#the-per-token-event, and the terminal summary agrees with them.
func TestStreamWithPerformance(t *testing.T) {
	h := newHarness(t)
	status, hdr, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{
		"stream": true, "include_performance": true, "max_tokens": 8,
		"stream_options": map[string]any{"include_usage": true},
	}), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	p := parseStream(t, body)
	n := len(p.events)
	if n == 0 {
		t.Fatal("no timing events")
	}
	// Order: (content, timing) per token, then finish, then usage.
	want := make([]string, 0, 2*n+2)
	for range n {
		want = append(want, "content", "timing")
	}
	want = append(want, "finish", "usage")
	if diff := cmp.Diff(want, p.order); diff != "" {
		t.Errorf("record order (-want +got):\n%s", diff)
	}
	prevReady := -1.0
	var maxITL float64
	for i, e := range p.events {
		if diff := cmp.Diff(eventKeys, keys(e)); diff != "" {
			t.Fatalf("event %d keys (-want +got):\n%s", i, diff)
		}
		if e["source"] != "batching_engine" {
			t.Errorf("event %d source %v", i, e["source"])
		}
		if got := int(num(t, e["token_index"])); got != i {
			t.Errorf("event %d token_index %d", i, got)
		}
		ready, prod := num(t, e["ready_ms"]), num(t, e["producer_delivered_ms"])
		recv, enq := num(t, e["handler_received_ms"]), num(t, e["body_enqueued_ms"])
		if !(ready <= prod && prod <= recv && recv <= enq) {
			t.Errorf("event %d: ready %v producer %v handler %v body %v out of order", i, ready, prod, recv, enq)
		}
		if ready < prevReady {
			t.Errorf("event %d ready_ms %v decreased from %v", i, ready, prevReady)
		}
		if i > 0 {
			maxITL = math.Max(maxITL, ready-prevReady)
		}
		prevReady = ready
		for _, d := range []struct {
			key  string
			want float64
		}{
			{"response_delivery_ms", prod - ready},
			{"handler_queue_ms", recv - prod},
			{"queue_delay_ms", recv - ready},
			{"client_delivery_ms", enq - recv},
		} {
			if got := num(t, e[d.key]); math.Abs(got-d.want) > tol {
				t.Errorf("event %d %s = %v, want %v", i, d.key, got, d.want)
			}
		}
		if i == 0 && (e["blocking_phase"] != nil || e["blocking_phase_ms"] != nil) {
			t.Errorf("first event blocking %v/%v, want null/null", e["blocking_phase"], e["blocking_phase_ms"])
		}
		if i > 0 && (e["blocking_phase"] == nil) != (e["blocking_phase_ms"] == nil) {
			t.Errorf("event %d: blocking_phase %v and blocking_phase_ms %v not null together", i, e["blocking_phase"], e["blocking_phase_ms"])
		}
	}
	perf := perfOf(t, p.terminal)
	lat := perf["latency"].(map[string]any)
	if got := int(num(t, lat["emitted_tokens"])); got != n {
		t.Errorf("emitted_tokens %d, events %d", got, n)
	}
	if got := int(num(t, lat["gap_samples"])); got != n-1 {
		t.Errorf("gap_samples %d, want %d", got, n-1)
	}
	if got, want := num(t, lat["ttft_ms"]), num(t, p.events[0]["ready_ms"]); math.Abs(got-want) > tol {
		t.Errorf("ttft_ms %v, first ready_ms %v", got, want)
	}
	if got := num(t, perf["ttft_ms"]); math.Abs(got-num(t, lat["ttft_ms"])) > tol {
		t.Errorf("performance.ttft_ms %v != latency.ttft_ms %v", got, lat["ttft_ms"])
	}
	if n > 1 {
		if got := num(t, lat["max_itl_ms"]); math.Abs(got-maxITL) > 1e-3 {
			t.Errorf("max_itl_ms %v, max event gap %v", got, maxITL)
		}
	}
	if got := int(num(t, perf["completion_tokens"])); got != n {
		t.Errorf("completion_tokens %d, want %d", got, n)
	}
	if perf["adapter_used"] != "base" {
		t.Errorf("adapter_used %v", perf["adapter_used"])
	}
	usage := p.chunks[len(p.chunks)-1]["usage"].(map[string]any)
	if got := int(num(t, usage["completion_tokens"])); got != n {
		t.Errorf("usage.completion_tokens %d, want %d", got, n)
	}
	if got, want := int(num(t, usage["total_tokens"])), int(num(t, usage["prompt_tokens"]))+n; got != want {
		t.Errorf("usage.total_tokens %d, want %d", got, want)
	}
}

func withConfig(f func(*Config)) harnessOption {
	return func(s *harnessSetup) { f(&s.cfg) }
}

// TestOptIn: the rules of docs/latency-guide.md#asking-for-timing-on-a-request for the request field and the server
// default, on streams and non-streaming responses.
func TestOptIn(t *testing.T) {
	hs := map[bool]*harness{
		false: newHarness(t),
		true:  newHarness(t, withConfig(func(c *Config) { c.PerformanceMetadata = true })),
	}
	for _, def := range []bool{false, true} {
		for _, field := range []string{"absent", "null", "true", "false"} {
			for _, stream := range []bool{true, false} {
				name := fmt.Sprintf("default=%v/field=%s/stream=%v", def, field, stream)
				t.Run(name, func(t *testing.T) {
					h := hs[def]
					extra := map[string]any{"stream": stream}
					switch field {
					case "null":
						extra["include_performance"] = json.RawMessage("null")
					case "true":
						extra["include_performance"] = true
					case "false":
						extra["include_performance"] = false
					}
					wantMeta := field == "true" || (def && (field == "absent" || field == "null"))
					wantEvents := stream && field == "true"
					status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(extra), nil)
					if status != http.StatusOK {
						t.Fatalf("status %d: %s", status, body)
					}
					var final map[string]any
					events := 0
					if stream {
						p := parseStream(t, body)
						events = len(p.events)
						final = p.terminal
						for i, c := range p.chunks {
							if _, ok := c["metadata"]; ok && c["choices"].([]any)[0].(map[string]any)["finish_reason"] == nil {
								t.Errorf("non-terminal chunk %d carries metadata", i)
							}
						}
					} else if err := json.Unmarshal(body, &final); err != nil {
						t.Fatal(err)
					}
					_, gotMeta := final["metadata"]
					if gotMeta != wantMeta {
						t.Errorf("metadata present %v, want %v", gotMeta, wantMeta)
					}
					if (events > 0) != wantEvents {
						t.Errorf("%d timing events, want them %v", events, wantEvents)
					}
				})
			}
		}
	}
}

// TestStreamWithoutOptInIsPureOpenAI: no Kiln-specific key or object.
func TestStreamWithoutOptInIsPureOpenAI(t *testing.T) {
	h := newHarness(t)
	_, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"stream": true}), nil)
	p := parseStream(t, body)
	if len(p.events) != 0 {
		t.Errorf("%d timing events without opt-in", len(p.events))
	}
	if len(p.chunks) < 2 {
		t.Fatalf("%d chunks", len(p.chunks))
	}
	for i, raw := range p.raw {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"choices", "created", "id", "model", "object", "system_fingerprint"}, keys(m)); diff != "" {
			t.Errorf("chunk %d keys (-want +got):\n%s", i, diff)
		}
	}
}

// TestNonStreaming: a chat.completion with usage, and a summary whose
// client_delivery_ms is null (no response body per token).
func TestNonStreaming(t *testing.T) {
	h := newHarness(t)
	status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"include_performance": true}), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var resp map[string]any
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp["object"] != "chat.completion" {
		t.Errorf("object %v", resp["object"])
	}
	perf := perfOf(t, resp)
	lat := perf["latency"].(map[string]any)
	phases := lat["phases"].(map[string]any)
	if v, ok := phases["client_delivery_ms"]; !ok || v != nil {
		t.Errorf("client_delivery_ms = %v (present %v), want null", v, ok)
	}
	usage := resp["usage"].(map[string]any)
	if got, want := num(t, usage["completion_tokens"]), num(t, lat["emitted_tokens"]); got != want {
		t.Errorf("usage.completion_tokens %v, emitted_tokens %v", got, want)
	}
	if num(t, usage["prompt_tokens"]) < 1 {
		t.Errorf("prompt_tokens %v", usage["prompt_tokens"])
	}
	for _, k := range []string{"tokenization_ms", "actor_queue_ms", "prefill_ms"} {
		if phases[k] == nil {
			t.Errorf("phase %s is null on a request that went through it", k)
		}
	}
}

// TestOneToken: a one-token request has TTFT and no ITL.
func TestOneToken(t *testing.T) {
	h := newHarness(t)
	_, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"include_performance": true, "stream": true, "max_tokens": 1}), nil)
	p := parseStream(t, body)
	if len(p.events) != 1 {
		t.Fatalf("%d events, want 1", len(p.events))
	}
	lat := perfOf(t, p.terminal)["latency"].(map[string]any)
	if lat["ttft_ms"] == nil {
		t.Error("ttft_ms is null")
	}
	for _, k := range []string{"itl_ms_p50", "itl_ms_p99", "itl_ms_p999", "max_itl_ms", "stall_threshold_ms"} {
		if lat[k] != nil {
			t.Errorf("%s = %v, want null", k, lat[k])
		}
	}
	if got := num(t, lat["gap_samples"]); got != 0 {
		t.Errorf("gap_samples %v", got)
	}
	if p.terminal["choices"].([]any)[0].(map[string]any)["finish_reason"] != "length" {
		t.Errorf("finish_reason %v, want length", p.terminal["choices"])
	}
}

// TestStreamMatchesNonStream: greedy decoding gives the same text both
// ways, and stop sequences cut it at the same place.
func TestStreamMatchesNonStream(t *testing.T) {
	h := newHarness(t)
	get := func(extra map[string]any) (string, string) {
		extra["max_tokens"] = 12
		_, _, body := h.do(http.MethodPost, chatPath, h.chatBody(extra), nil)
		if extra["stream"] == true {
			p := parseStream(t, body)
			return p.content(), p.terminal["choices"].([]any)[0].(map[string]any)["finish_reason"].(string)
		}
		var r struct {
			Choices []struct {
				Message      struct{ Content string }
				FinishReason string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal(body, &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("%v: %s", err, body)
		}
		return r.Choices[0].Message.Content, r.Choices[0].FinishReason
	}
	full, _ := get(map[string]any{"stream": false})
	streamed, _ := get(map[string]any{"stream": true})
	if full != streamed {
		t.Fatalf("stream %q != non-stream %q", streamed, full)
	}
	if len(full) < 4 {
		t.Skipf("completion %q too short to pick a stop sequence", full)
	}
	stop := full[len(full)/2 : len(full)/2+2]
	want := full[:strings.Index(full, stop)]
	for _, stream := range []bool{false, true} {
		got, finish := get(map[string]any{"stream": stream, "stop": stop})
		if got != want || finish != "stop" {
			t.Errorf("stream=%v stop %q: got %q (%s), want %q (stop)", stream, stop, got, finish, want)
		}
	}
}
