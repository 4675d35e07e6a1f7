package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/schemas"
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
)

// ResizeSlots and KVBytesPerPos make the harness backend an
// engine.KVResizer over the real model state.
func (h *hookBackend) ResizeSlots(n int) int64 { return h.Backend.(engine.KVResizer).ResizeSlots(n) }

// KVBytesPerPos implements engine.KVResizer.
func (h *hookBackend) KVBytesPerPos() int64 { return h.Backend.(engine.KVResizer).KVBytesPerPos() }

const resizePath = "/v1/maintenance/kv/resize"

// TestKVResizeRoute: the route needs the access token; every bad body or
// size is a 400 with its code (the bound named for a size beyond it) and
// changes nothing; a grow and a shrink reallocate the real arena, reply
// with RSS before and after (valid against the closed schema), are
// counted by reason and direction, listed by /v1/maintenance/recent, and
// the server keeps serving at the new size.
func TestKVResizeRoute(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	locked := newHarness(t, withConfig(func(c *Config) { c.AccessToken = "s3cret" }))
	if status, _, _ := locked.do(http.MethodPost, resizePath, `{"tokens":4096}`, nil); status != http.StatusUnauthorized {
		t.Errorf("resize without the token: %d, want 401", status)
	}
	if status, _, _ := locked.do(http.MethodGet, "/v1/maintenance/recent", nil, nil); status != http.StatusUnauthorized {
		t.Errorf("recent without the token: %d, want 401", status)
	}

	h := newHarness(t, withConfig(func(c *Config) { c.Engine.KVMaxTokens = 8 * 2048 }))
	seq := h.backend.SeqLen()
	start := h.eng.Snapshot()
	bad := []struct {
		name, body, code, names string
	}{
		{"zero", `{"tokens":0}`, "invalid_kv_size", "one context"},
		{"negative", `{"tokens":-5}`, "invalid_kv_size", "one context"},
		{"below one context", fmt.Sprintf(`{"tokens":%d}`, seq-1), "invalid_kv_size", "one context"},
		{"beyond the bound", fmt.Sprintf(`{"tokens":%d}`, 8*seq+1), "invalid_kv_size", fmt.Sprint(8 * seq)},
		{"huge", `{"tokens":99999999999999}`, "invalid_kv_size", fmt.Sprint(8 * seq)},
		{"missing", `{}`, "missing_required_parameter", "tokens"},
		{"null", `{"tokens":null}`, "missing_required_parameter", "tokens"},
		{"string", `{"tokens":"4096"}`, "invalid_type", "integer"},
		{"fraction", `{"tokens":4096.5}`, "invalid_type", "integer"},
		{"unknown field", `{"tokens":4096,"slots":2}`, "unknown_parameter", "slots"},
		{"array", `[4096]`, "invalid_json", "object"},
		{"not json", `tokens=4096`, "invalid_json", "JSON"},
		{"empty", ``, "invalid_json", "empty"},
	}
	for _, tc := range bad {
		status, _, body := h.do(http.MethodPost, resizePath, tc.body, nil)
		if status != http.StatusBadRequest || errCode(t, body) != tc.code || !strings.Contains(string(body), tc.names) {
			t.Errorf("%s: %d %s, want 400 %s naming %q", tc.name, status, body, tc.code, tc.names)
		}
	}
	if status, _, _ := h.do(http.MethodGet, resizePath, nil, nil); status != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", status)
	}
	if s := h.eng.Snapshot(); s.KVBudget != start.KVBudget || s.KVSlots != start.KVSlots || s.Mutations != 0 {
		t.Errorf("after the refusals: budget %d slots %d mutations %d; want %d %d 0", s.KVBudget, s.KVSlots, s.Mutations, start.KVBudget, start.KVSlots)
	}

	steps := []struct {
		tokens, slots int
		direction     string
	}{
		{8 * seq, 8, "grow"},
		{seq + 1, 2, "shrink"},
		{seq + 1, 2, "none"},
	}
	from := start.KVBudget
	for _, st := range steps {
		status, _, body := h.do(http.MethodPost, resizePath, fmt.Sprintf(`{"tokens":%d}`, st.tokens), nil)
		if status != http.StatusOK {
			t.Fatalf("resize to %d: %d %s", st.tokens, status, body)
		}
		if err := v.Validate(schemas.ObservabilityID, "maintenance_kv_resize", body); err != nil {
			t.Errorf("resize reply does not match its schema: %v\n%s", err, body)
		}
		var r KVResizeReply
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		per := h.backend.KVBytesPerPos()
		if r.FromTokens != from || r.ActualTokens != st.tokens || r.Slots != st.slots || r.Direction != st.direction || r.Reason != "maintenance" ||
			r.BytesBefore != int64(from)*per || r.BytesAfter != int64(st.tokens)*per || r.RSSBeforeBytes <= 0 || r.RSSAfterBytes <= 0 {
			t.Errorf("resize %d -> %d: %+v; want %d slots, %s, bytes at %d per position and RSS", from, st.tokens, r, st.slots, st.direction, per)
		}
		t.Logf("resize %s %d -> %d tokens (%d -> %d slots, %d -> %d bytes): RSS %d -> %d bytes in %.2f ms",
			r.Direction, r.FromTokens, r.ActualTokens, r.FromSlots, r.Slots, r.BytesBefore, r.BytesAfter, r.RSSBeforeBytes, r.RSSAfterBytes, r.DurationMs)
		from = st.tokens
		if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"max_tokens": 2}), nil); status != http.StatusOK {
			t.Errorf("chat after resizing to %d: %d %s", st.tokens, status, body)
		}
		if s := h.eng.Snapshot(); s.KVBudget != st.tokens || s.KVSlots != st.slots || h.backend.Slots() != st.slots {
			t.Errorf("engine after resizing to %d: budget %d, slots %d (backend %d)", st.tokens, s.KVBudget, s.KVSlots, h.backend.Slots())
		}
		var cfg struct {
			Engine struct {
				KVBudget int `json:"kv_budget"`
				MaxBatch int `json:"max_batch"`
			} `json:"engine"`
		}
		if err := json.Unmarshal(h.getJSON("/v1/config", nil), &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Engine.KVBudget != st.tokens || cfg.Engine.MaxBatch != st.slots {
			t.Errorf("/v1/config after resizing to %d: kv_budget %d, max_batch %d; want %d, %d", st.tokens, cfg.Engine.KVBudget, cfg.Engine.MaxBatch, st.tokens, st.slots)
		}
	}
	for _, dir := range []string{"grow", "shrink", "none"} {
		if got := h.metricValue(t, telemetry.MetricKVResizes, map[string]string{"reason": "maintenance", "direction": dir}); got != 1 {
			t.Errorf(`%s{reason="maintenance",direction=%q} = %v, want 1`, telemetry.MetricKVResizes, dir, got)
		}
	}
	body := h.getJSON("/v1/maintenance/recent", nil)
	if err := v.Validate(schemas.ObservabilityID, "maintenance_recent", body); err != nil {
		t.Errorf("recent does not match its schema: %v\n%s", err, body)
	}
	var recent maintenanceRecentJSON
	if err := json.Unmarshal(body, &recent); err != nil {
		t.Fatal(err)
	}
	if len(recent.Operations) != 3 || recent.Operations[0].Kind != "resize" || recent.Operations[2].Outcome != "ok" ||
		!strings.Contains(recent.Operations[2].Summary, "grow") || recent.Operations[0].DurationMs == nil {
		t.Errorf("recent operations: %s; want the three resizes, newest first, ended", body)
	}
}

// TestResizeChargesQueuedRequest: a stream decodes when an operator's
// resize is queued and a second request arrives; the resize waits for the
// stream to finish (admission paused), reallocates, and the second request
// is admitted after it. The queued request's performance shows resize_ms
// and its chat span links to the kiln.resize span (link kind resize); the
// stream, already active, has resize_ms null and no such link.
func TestResizeChargesQueuedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, withSpans(tracetest.NewInMemoryExporter()), withFakeTime())
		entered, gate := h.holdDecode(1)
		_, streamed := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": 8}))
		<-entered
		resized := make(chan []byte, 1)
		go func() {
			status, _, body := h.do(http.MethodPost, resizePath, `{"tokens":16384}`, nil)
			if status != http.StatusOK {
				t.Errorf("resize: %d %s", status, body)
			}
			resized <- body
		}()
		waitFor(t, "the resize to queue", func() bool { return h.eng.Snapshot().MutationsPending > 0 })
		queued := make(chan []byte, 1)
		go func() {
			status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"include_performance": true, "max_tokens": 2}), nil)
			if status != http.StatusOK {
				t.Errorf("queued chat: %d %s", status, body)
			}
			queued <- body
		}()
		waitFor(t, "the chat to queue", func() bool { return h.eng.Snapshot().QueueDepth > 0 })
		close(gate)
		streamBody, queuedBody := <-streamed, <-queued
		<-resized

		phases := func(perf map[string]any) map[string]any {
			return perf["latency"].(map[string]any)["phases"].(map[string]any)
		}
		var q map[string]any
		if err := json.Unmarshal(queuedBody, &q); err != nil {
			t.Fatal(err)
		}
		if ms, ok := phases(perfOf(t, q))["resize_ms"].(float64); !ok || ms <= 0 {
			t.Errorf("queued request resize_ms = %v, want > 0", phases(perfOf(t, q))["resize_ms"])
		}
		checkNotApplicableUnmeasured(t, h, q["id"].(string)) // measured, so never "not applicable"
		if ms := phases(perfOf(t, parseStream(t, streamBody).terminal))["resize_ms"]; ms != nil {
			t.Errorf("active stream resize_ms = %v, want null", ms)
		}

		spans := waitSpans(t, h.spans, telemetry.SpanResize)
		resizes := spanNamed(spans, telemetry.SpanResize)
		if len(resizes) != 1 || resizes[0].Parent.IsValid() {
			t.Fatalf("%d kiln.resize spans (want 1, the root of its own trace)", len(resizes))
		}
		rs := resizes[0]
		attrs := map[string]any{}
		for _, kv := range rs.Attributes {
			attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		if attrs[telemetry.AttrMaintenanceReason] != "maintenance" || attrs[telemetry.AttrResizeActualTokens] != int64(16384) || attrs[telemetry.AttrResizeDirection] != "grow" {
			t.Errorf("kiln.resize attributes %v", attrs)
		}
		waitSpans(t, h.spans, "chat "+h.model.ID)
		linked := map[bool]int{} // by the chat span's stream attribute
		for _, s := range h.spans.GetSpans() {
			if s.Name != "chat "+h.model.ID {
				continue
			}
			stream := false
			for _, kv := range s.Attributes {
				if string(kv.Key) == telemetry.AttrStream {
					stream = kv.Value.AsBool()
				}
			}
			for _, l := range s.Links {
				if l.SpanContext.Equal(rs.SpanContext) && linkKind(l.Attributes) == telemetry.LinkKindResize {
					linked[stream]++
				}
			}
		}
		if linked[false] != 1 || linked[true] != 0 {
			t.Errorf("chat span links to kiln.resize: queued %d, active stream %d; want 1 and 0", linked[false], linked[true])
		}
		checkQueuedBehind(t, h, q["id"].(string), "resize", rs)
	})
}

func linkKind(kvs []attribute.KeyValue) string {
	for _, kv := range kvs {
		if string(kv.Key) == telemetry.AttrLinkKind {
			return kv.Value.AsString()
		}
	}
	return ""
}

// TestPrepareTrainingMemory: the training worker's call shrinks the arena
// for reason training_memory_preparation (counted and logged as such),
// never grows it, and a size below one context is refused.
func TestPrepareTrainingMemory(t *testing.T) {
	h := newHarness(t)
	seq := h.backend.SeqLen()
	r, err := h.srv.PrepareTrainingMemory(t.Context(), seq)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reason != telemetry.ResizeReasonTraining || r.Direction != "shrink" || r.ActualTokens != seq || r.Slots != 1 {
		t.Errorf("prepare to one context: %+v", r)
	}
	r, err = h.srv.PrepareTrainingMemory(t.Context(), 100*seq)
	if err != nil {
		t.Fatal(err)
	}
	if r.Direction != "none" || r.ActualTokens != seq {
		t.Errorf("prepare to more than the budget: %+v, want none at %d", r, seq)
	}
	if _, err := h.srv.PrepareTrainingMemory(t.Context(), seq-1); err == nil || errCodeOf(err) != "invalid_kv_size" {
		t.Errorf("prepare below one context: %v, want invalid_kv_size", err)
	}
	for dir, want := range map[string]float64{"shrink": 1, "none": 1, "grow": 0} {
		if got := h.metricValue(t, telemetry.MetricKVResizes, map[string]string{"reason": telemetry.ResizeReasonTraining, "direction": dir}); got != want {
			t.Errorf("%s{reason=training_memory_preparation,direction=%s} = %v, want %v", telemetry.MetricKVResizes, dir, got, want)
		}
	}
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"max_tokens": 2}), nil); status != http.StatusOK {
		t.Errorf("chat after preparing: %d %s", status, body)
	}
}

func errCodeOf(err error) string {
	var e *wire.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// FuzzKVResizeBody: any body is either refused with a 400 in the closed set
// of codes, naming a parameter, or is exactly {"tokens": <integer>} and
// gives that integer.
func FuzzKVResizeBody(f *testing.F) {
	for _, s := range []string{`{"tokens":4096}`, `{"tokens":0}`, `{"tokens":-1}`, `{"tokens":1e3}`, `{"tokens":"1"}`,
		`{"tokens":4096,"x":1}`, `{}`, `[]`, `null`, ``, `{"tokens":99999999999999999999}`, `{"tokens":null}`} {
		f.Add([]byte(s))
	}
	codes := map[string]bool{"invalid_json": true, "unknown_parameter": true, "missing_required_parameter": true, "invalid_type": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		fields, err := wire.DecodeObject(body)
		var tokens int64
		if err == nil {
			tokens, err = kvResizeTokens(fields)
		}
		if err != nil {
			var e *wire.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !codes[e.Code] {
				t.Fatalf("body %q: %v, want a 400 with a known code", body, err)
			}
			return
		}
		var back struct {
			Tokens *int64 `json:"tokens"`
		}
		if json.Unmarshal(body, &back) != nil || back.Tokens == nil || *back.Tokens != tokens || len(fields) != 1 {
			t.Fatalf("body %q accepted as %d tokens", body, tokens)
		}
	})
}

// TestKVResizeLogged: a resize writes one "kv resize" line (telemetry's
// log, as cmd/kiln wires it) with its reason, sizes, bytes, RSS and
// durations; a refused size writes a warning (the server's) and no resize
// line.
func TestKVResizeLogged(t *testing.T) {
	var buf lockedBuf
	h := newHarness(t, func(s *harnessSetup) { s.topts = append(s.topts, telemetry.WithLogOutput(&buf, false)) })
	log := zerolog.New(&buf)
	srv, err := New(h.cfg, Deps{Model: h.model, Engine: h.eng, Telemetry: h.tel, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	seq := h.backend.SeqLen()
	if _, err := srv.ResizeKV(t.Context(), seq-1, engine.ReasonMaintenance); err == nil {
		t.Fatal("a size below one context was accepted")
	}
	if _, err := srv.ResizeKV(t.Context(), 2*seq, engine.ReasonAutomatic); err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 || lines[0]["message"] != "kv resize refused" || lines[0]["level"] != "warn" {
		t.Fatalf("log lines %v; want the refusal then the resize", lines)
	}
	got := lines[1]
	if got["message"] != "kv resize" || got["reason"] != "automatic_memory_policy" || got["direction"] != "shrink" ||
		got["requested_tokens"] != float64(2*seq) || got["actual_tokens"] != float64(2*seq) || got["slots"] != float64(2) {
		t.Errorf("resize log line %v", got)
	}
	for _, k := range []string{"operation_id", "from_tokens", "bytes_before", "bytes_after", "dropped_bytes", "rss_before_bytes", "rss_after_bytes", "duration_ms", "drain_ms", "wait_ms"} {
		if _, ok := got[k].(float64); !ok {
			t.Errorf("resize log line lacks %s: %v", k, got)
		}
	}
}

// lockedBuf is a bytes.Buffer safe for a logger and a reader.
type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
