package server

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/schemas"
	"github.com/kiln-ai/kiln/telemetry"
)

// Reclaim makes the harness backend an engine.Reclaimer: it sleeps
// reclaimPause (a slow trim: the cause under test) and then runs the real
// model state's Reclaim.
func (h *hookBackend) Reclaim() int64 {
	h.mu.Lock()
	d := h.reclaimPause
	h.mu.Unlock()
	time.Sleep(d)
	if r, ok := h.Backend.(engine.Reclaimer); ok {
		return r.Reclaim()
	}
	return 0
}

func (h *hookBackend) setReclaimPause(d time.Duration) {
	h.mu.Lock()
	h.reclaimPause = d
	h.mu.Unlock()
}

// errCode returns the OpenAI error code of a body.
func errCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	return e.Error.Code
}

// TestServingProfiles: docs/maintenance.md section 1 over HTTP. Every profile
// shows in /health and /v1/config (both valid against their closed
// schemas); stable and experimental serve chat, maintenance answers chat
// 503 inference_disabled_by_profile and /health 503 "maintenance" while
// its trim route works.
func TestServingProfiles(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		profile                  ServingProfile
		source                   string
		chat, health             int
		chatCode, status, policy string
	}{
		{ProfileStable, SourceDefault, 200, 200, "", "ok", "writer_priority"},
		{ProfileExperimental, SourceFlag, 200, 200, "", "ok", "writer_priority"},
		{ProfileMaintenance, SourceEnv, 503, 503, "inference_disabled_by_profile", "maintenance", "exclusive"},
	}
	for _, tc := range tests {
		t.Run(string(tc.profile), func(t *testing.T) {
			h := newHarness(t, withConfig(func(c *Config) {
				c.ServingProfile, c.ProfileSource, c.MemoryReclaim = tc.profile, tc.source, ReclaimOnDemand
			}))
			status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
			if status != tc.chat || (tc.chatCode != "" && errCode(t, body) != tc.chatCode) {
				t.Errorf("chat: %d %s, want %d %s", status, body, tc.chat, tc.chatCode)
			}
			status, _, body = h.do(http.MethodGet, "/health", nil, nil)
			if err := v.Validate(schemas.ObservabilityID, "health", body); err != nil {
				t.Errorf("health does not match its schema: %v\n%s", err, body)
			}
			var health struct {
				Status         string             `json:"status"`
				ServingProfile servingProfileJSON `json:"serving_profile"`
			}
			if err := json.Unmarshal(body, &health); err != nil {
				t.Fatal(err)
			}
			p := effectivePolicy{tc.policy, tc.policy, tc.policy, tc.policy}
			want := servingProfileJSON{Profile: tc.profile, Source: tc.source, EffectivePolicy: p}
			if d := cmp.Diff(want, health.ServingProfile); d != "" || status != tc.health || health.Status != tc.status {
				t.Errorf("health %d %q, want %d %q; serving_profile (-want +got):\n%s", status, health.Status, tc.health, tc.status, d)
			}
			cfgBody := h.getJSON("/v1/config", nil)
			if err := v.Validate(schemas.ObservabilityID, "config", cfgBody); err != nil {
				t.Errorf("config does not match its schema: %v\n%s", err, cfgBody)
			}
			var cfg struct {
				ServingProfile servingProfileJSON `json:"serving_profile"`
			}
			if err := json.Unmarshal(cfgBody, &cfg); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, cfg.ServingProfile); d != "" {
				t.Errorf("config serving_profile (-want +got):\n%s", d)
			}
			status, _, body = h.do(http.MethodPost, "/v1/maintenance/trim", nil, nil)
			if status != http.StatusOK {
				t.Errorf("trim: %d %s", status, body)
			}
		})
	}
}

// TestTrimRoute: the trim route needs the access token like every route,
// is 409 memory_reclaim_disabled while reclaim is off and 405 for GET; on
// demand it runs a real trim on the real engine whose reply matches its
// schema, and the reclaim families count it.
func TestTrimRoute(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	off := newHarness(t, withConfig(func(c *Config) { c.AccessToken = "s3cret" }))
	if status, _, body := off.do(http.MethodPost, "/v1/maintenance/trim", nil, auth); status != http.StatusConflict || errCode(t, body) != "memory_reclaim_disabled" {
		t.Errorf("reclaim off: %d %s, want 409 memory_reclaim_disabled", status, body)
	}
	locked := newHarness(t, withConfig(func(c *Config) { c.AccessToken, c.MemoryReclaim = "s3cret", ReclaimOnDemand }))
	if status, _, _ := locked.do(http.MethodPost, "/v1/maintenance/trim", nil, nil); status != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", status)
	}
	if status, _, body := locked.do(http.MethodPost, "/v1/maintenance/trim", nil, auth); status != http.StatusOK {
		t.Errorf("with the token: %d %s, want 200", status, body)
	}
	if status, _, _ := locked.do(http.MethodGet, "/v1/maintenance/trim", nil, auth); status != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", status)
	}

	h := newHarness(t, withConfig(func(c *Config) { c.MemoryReclaim = ReclaimOnDemand }))
	auth = nil
	// A wide prefill first, so the forward scratch has something to give back.
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"max_tokens": 2}), auth); status != 200 {
		t.Fatalf("chat: %d %s", status, body)
	}
	status, _, body := h.do(http.MethodPost, "/v1/maintenance/trim", nil, auth)
	if status != http.StatusOK {
		t.Fatalf("trim: %d %s", status, body)
	}
	if err := v.Validate(schemas.ObservabilityID, "maintenance_trim", body); err != nil {
		t.Errorf("trim reply does not match its schema: %v\n%s", err, body)
	}
	var res trimBody
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != telemetry.ReclaimOutcomeReclaimed || res.BackendBytes <= 0 || res.ReclaimedBytes < res.BackendBytes || res.RSSBeforeBytes <= 0 || res.RSSAfterBytes <= 0 {
		t.Errorf("trim after a prefill: %+v; want reclaimed with backend bytes and RSS", res)
	}
	t.Logf("trim: reclaimed %d bytes (backend %d, heap %d); RSS %d -> %d bytes in %.2f ms",
		res.ReclaimedBytes, res.BackendBytes, res.HeapReleasedBytes, res.RSSBeforeBytes, res.RSSAfterBytes, res.DurationMs)
	// Nothing wider ran since: the scratch has nothing more to give.
	_, _, body = h.do(http.MethodPost, "/v1/maintenance/trim", nil, auth)
	var again trimBody
	if err := json.Unmarshal(body, &again); err != nil {
		t.Fatal(err)
	}
	if again.BackendBytes != 0 {
		t.Errorf("second trim: backend gave %d bytes again", again.BackendBytes)
	}
	// The actor answers a trim before it publishes the snapshot the
	// metrics read: wait, bounded, for the second trim to show.
	var got float64
	waitFor(t, "the second trim's count", func() bool {
		got = h.metricValue(t, "kiln_memory_reclaim_attempts_total", map[string]string{"outcome": "reclaimed"}) +
			h.metricValue(t, "kiln_memory_reclaim_attempts_total", map[string]string{"outcome": "zero_yield"})
		return got >= 2
	})
	if got != 2 {
		t.Errorf("kiln_memory_reclaim_attempts_total = %v over both outcomes, want 2", got)
	}
	if b := h.metricValue(t, "kiln_memory_reclaimed_bytes_total", nil); b < float64(res.ReclaimedBytes) {
		t.Errorf("kiln_memory_reclaimed_bytes_total = %v, want at least %d", b, res.ReclaimedBytes)
	}
}

// TestStallTrim: an operator's trim while a stream decodes (held inside a
// decode step until the trim is queued, so it runs between two of the
// stream's forward invocations) is the stream's stall, attributed to trim
// (the trim's hold is the whole ownership wait, and the tie goes to the
// narrower phase) in the SSE event, the summary, /v1/stats/decode,
// kiln_token_stalls_total and a stall span; the kiln.trim span is exported
// in its own trace.
func TestStallTrim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, withSpans(tracetest.NewInMemoryExporter()), withConfig(func(c *Config) { c.MemoryReclaim = ReclaimOnDemand }), withFakeTime())
		h.backend.setReclaimPause(stallHold) // the slow trim: the stall's cause
		entered, gate := h.holdDecode(1)
		_, result := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": 12}))
		<-entered
		trimmed := make(chan []byte, 1)
		go func() {
			status, _, body := h.do(http.MethodPost, "/v1/maintenance/trim", nil, nil)
			if status != http.StatusOK {
				t.Errorf("trim: %d %s", status, body)
			}
			trimmed <- body
		}()
		waitFor(t, "the trim to queue", func() bool { return h.eng.Snapshot().TrimsPending > 0 })
		close(gate)
		body := <-result
		<-trimmed

		ev := h.stallEvidence(t, body, "trim")
		if ev.sse != 1 || ev.summary != 1 || ev.window != 1 || ev.metric != 1 || ev.span != 1 {
			t.Errorf("trim stalls: sse %d summary %d window %d metric %d span %d; want 1 everywhere", ev.sse, ev.summary, ev.window, ev.metric, ev.span)
		}
		spans := waitSpans(t, h.spans, telemetry.SpanTrim)
		trims := spanNamed(spans, telemetry.SpanTrim)
		if len(trims) != 1 {
			t.Fatalf("%d kiln.trim spans, want 1", len(trims))
		}
		trim := trims[0]
		if trim.Parent.IsValid() {
			t.Errorf("kiln.trim has a parent %v; want the root of its own trace", trim.Parent)
		}
		if d := trim.EndTime.Sub(trim.StartTime); d < stallHold {
			t.Errorf("kiln.trim lasted %v, want at least the %v trim", d, stallHold)
		}
		// Blocked by what: the trim stall's span links to the kiln.trim span.
		stalls := stallsWithReason(spans, "trim")
		if len(stalls) != 1 {
			t.Fatalf("%d trim stall spans, want 1", len(stalls))
		}
		var kinds []string
		for _, l := range stalls[0].Links {
			if l.SpanContext.Equal(trim.SpanContext) {
				for _, kv := range l.Attributes {
					if string(kv.Key) == telemetry.AttrLinkKind {
						kinds = append(kinds, kv.Value.AsString())
					}
				}
			}
		}
		if d := cmp.Diff([]string{telemetry.LinkKindTrim}, kinds); d != "" {
			t.Errorf("stall links to kiln.trim by kind (-want +got):\n%s", d)
		}
		checkNamed(t, h, parseStream(t, body).terminal["id"].(string), "trim", "trim", "trim, freed ", trims)
	})
}
