package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/schemas"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// diagnosisJSON is the detail record's diagnosis object.
type diagnosisJSON struct {
	Backend             string           `json:"backend"`
	NotApplicablePhases []string         `json:"not_applicable_phases"`
	OwnPrefillMs        *float64         `json:"own_prefill_ms"`
	TokensReleased      bool             `json:"tokens_released"`
	Tokens              []map[string]any `json:"tokens"`
	StallsDropped       int              `json:"stalls_dropped"`
	Stalls              []struct {
		TokenIndex int     `json:"token_index"`
		GapMs      float64 `json:"gap_ms"`
		Reason     string  `json:"reason"`
		Blockers   []struct {
			Kind       string  `json:"kind"`
			RequestID  *string `json:"request_id"`
			Self       bool    `json:"self"`
			DurationMs float64 `json:"duration_ms"`
		} `json:"blockers"`
	} `json:"stalls"`
}

type detailJSON struct {
	ID        string         `json:"id"`
	Latency   map[string]any `json:"latency"`
	Diagnosis diagnosisJSON  `json:"diagnosis"`
}

// TestRecentRequestDiagnosis: a request stalled by another's prefill; its
// detail record names the blocking request, keeps every token's 14 timing
// fields as the stream sent them, and lists the stall with its reason.
func TestRecentRequestDiagnosis(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, withConfig(func(c *Config) { c.Engine.PrefillChunk = 2048 }), withFakeTime())
		b, _, result := h.prefillStallsStream(t, 24)
		var longResp struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &longResp); err != nil {
			t.Fatal(err)
		}
		stream := parseStream(t, <-result)
		streamID, _ := stream.terminal["id"].(string)

		var d detailJSON
		code, _, raw := h.do(http.MethodGet, "/v1/stats/recent-requests/"+streamID, nil, nil)
		if code != http.StatusOK {
			t.Fatalf("detail: HTTP %d: %s", code, raw)
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("detail: %v: %s", err, raw)
		}
		v, err := schemas.NewValidator()
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(schemas.ObservabilityID, "recent_request_detail", raw); err != nil {
			t.Errorf("the detail does not match recent_request_detail: %v", err)
		}
		if d.ID != streamID {
			t.Fatalf("detail id = %q, want %q", d.ID, streamID)
		}
		dg := d.Diagnosis

		// Every token's event, as the stream sent it (durations were kept as
		// float32 milliseconds: compare to a microsecond).
		if len(dg.Tokens) != len(stream.events) {
			t.Fatalf("diagnosis has %d tokens, the stream %d events", len(dg.Tokens), len(stream.events))
		}
		for i, e := range stream.events {
			got := dg.Tokens[i]
			if len(got) != 14 {
				t.Errorf("token %d has %d fields, want 14", i, len(got))
			}
			for k, v := range e {
				if n, ok := v.(json.Number); ok {
					v, _ = n.Float64()
				}
				if f, ok := v.(float64); ok {
					if g, _ := got[k].(float64); math.Abs(g-f) > 1e-3 {
						t.Errorf("token %d %s = %v, stream sent %v", i, k, got[k], v)
					}
				} else if diff := cmp.Diff(v, got[k]); diff != "" {
					t.Errorf("token %d %s (-stream +diagnosis):\n%s", i, k, diff)
				}
			}
		}

		// The stall: actor_prefill, blocked by the long-prompt request.
		var prefill int
		for _, s := range dg.Stalls {
			if s.Reason != "actor_prefill" {
				continue
			}
			prefill++
			if s.GapMs < float64(stallHold.Milliseconds()) {
				t.Errorf("stall at token %d: gap %v ms, want at least the hold", s.TokenIndex, s.GapMs)
			}
			named := false
			for _, bl := range s.Blockers {
				if bl.Kind == "actor_prefill" && bl.RequestID != nil && *bl.RequestID == longResp.ID && !bl.Self {
					named = true
				}
			}
			if !named {
				t.Errorf("stall at token %d does not name the long-prompt request %s: %+v", s.TokenIndex, longResp.ID, s.Blockers)
			}
		}
		if want := int(num(t, d.Latency["stall_reasons"].(map[string]any)["actor_prefill"])); prefill != want || prefill == 0 {
			t.Errorf("diagnosis lists %d actor_prefill stalls, the summary counts %d (want equal, >= 1)", prefill, want)
		}
		if dg.OwnPrefillMs == nil || *dg.OwnPrefillMs < 0 {
			t.Errorf("own_prefill_ms = %v, want a measured value", dg.OwnPrefillMs)
		}
		if diff := cmp.Diff([]string{"readback_ms", "graph_capture_ms", "graph_replay_ms", "synchronization_ms"}, dg.NotApplicablePhases); dg.Backend != "cpu" || diff != "" {
			t.Errorf("backend %q, not applicable phases (-want +got):\n%s", dg.Backend, diff)
		}
		checkNotApplicableUnmeasured(t, h, streamID)

		if code, _, raw := h.do(http.MethodGet, "/v1/stats/recent-requests/chatcmpl-nope", nil, nil); code != http.StatusNotFound ||
			!strings.Contains(string(raw), "request_not_found") {
			t.Errorf("unknown id: HTTP %d %s, want 404 request_not_found", code, raw)
		}
	})
}

// checkNotApplicableUnmeasured fetches request id's detail and fails if
// a phase it lists as not applicable was measured (non-null) in the same
// record's summary: the dashboard would show the phase both measured and
// "not applicable". It returns the detail.
func checkNotApplicableUnmeasured(t *testing.T, h *harness, id string) detailJSON {
	t.Helper()
	code, _, raw := h.do(http.MethodGet, "/v1/stats/recent-requests/"+id, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("detail of %s: HTTP %d: %s", id, code, raw)
	}
	var d detailJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("detail of %s: %v: %s", id, err, raw)
	}
	phases, _ := d.Latency["phases"].(map[string]any)
	for _, k := range d.Diagnosis.NotApplicablePhases {
		if v, ok := phases[k]; !ok || v != nil {
			t.Errorf("%s: phase %s is listed as not applicable but the summary has %v", id, k, v)
		}
	}
	return d
}

// TestNotApplicablePhasesNeverObserved: no phase the CPU engine can
// measure is listed as not applicable: not the maintenance phases it
// observes whenever an operation overlaps a request (engine.PhaseResize
// to engine.PhaseTraining), not the slots it always measures, and not the
// actor, server and delivery phases, which are no backend phase at all.
func TestNotApplicablePhasesNeverObserved(t *testing.T) {
	na := map[latency.Phase]bool{}
	for _, p := range notApplicablePhases {
		na[p] = true
	}
	observable := []timing.BackendPhase{timing.BackendSampling, timing.BackendGPULockWait}
	for s := engine.PhaseResize; s <= engine.PhaseTraining; s++ {
		observable = append(observable, s)
	}
	for _, s := range observable {
		p, ok := latency.ParsePhase(s.String())
		if !ok {
			t.Fatalf("slot %v names no phase", s)
		}
		if na[p] {
			t.Errorf("%s is measured by the CPU engine but listed as not applicable", p.Key())
		}
	}
	slots := map[string]bool{}
	for s := range timing.NumBackendPhases {
		slots[s.String()] = true
	}
	for p := range latency.NumPhases {
		if !slots[p.String()] && na[p] {
			t.Errorf("%s is no backend phase (the server or the actor measures it) but is listed as not applicable", p.Key())
		}
	}
}

// TestDiagRecorderBounds: the token rows are the newest MaxRetainedGaps,
// the stall candidates the newest maxStallRows, and only stalls at or
// above the request's threshold are kept.
func TestDiagRecorderBounds(t *testing.T) {
	received := time.Unix(1000, 0)
	var d diagRecorder
	n := latency.MaxRetainedGaps + 10
	var ph timing.Phases
	for i := range n {
		e := latency.TokenEvent{Index: i, ID: i, ReadyMs: float64(i), HasBlocking: i > 0}
		e.Gap.Gap = time.Millisecond
		if i%10 == 5 {
			e.Gap.Gap, e.Gap.Reason = 300*time.Millisecond, latency.ReasonActorPrefill
		}
		if i%10 == 7 {
			e.Gap.Gap, e.Gap.Reason = 900*time.Millisecond, latency.ReasonGPULockWait
		}
		d.observe(&e, &ph, nil, 1, received)
	}
	got := d.finish(latency.Float(500), resolvers{})
	if len(got.tokens) != latency.MaxRetainedGaps || got.firstIndex != 10 {
		t.Fatalf("%d token rows from index %d, want %d from 10", len(got.tokens), got.firstIndex, latency.MaxRetainedGaps)
	}
	if e := got.tokens[0].event(got.firstIndex); e.Index != 10 || e.ID != 10 || e.ReadyMs != 10 {
		t.Errorf("oldest row = %+v, want token 10", e)
	}
	if e := got.tokens[len(got.tokens)-1].event(got.firstIndex + len(got.tokens) - 1); e.Index != n-1 || e.ID != n-1 {
		t.Errorf("newest row = %+v, want token %d", e, n-1)
	}
	// Candidates: 2 per 10 tokens, the newest 256 kept; of those only the
	// 900 ms ones reach the 500 ms threshold.
	if got.stallsDropped != 2*n/10-maxStallRows {
		t.Errorf("stalls dropped = %d, want %d", got.stallsDropped, 2*n/10-maxStallRows)
	}
	if len(got.stalls) != maxStallRows/2 {
		t.Errorf("%d stalls kept, want %d", len(got.stalls), maxStallRows/2)
	}
	for _, s := range got.stalls {
		if s.reason != latency.ReasonGPULockWait || s.gapMs != 900 {
			t.Errorf("kept stall %+v below the threshold", s)
		}
	}
}

// TestRecentRingReleasesOldTokenRows: only the newest diagDetailRecords
// records keep their token rows; the identity registry resolves requests
// in flight and in the ring.
func TestRecentRingReleasesOldTokenRows(t *testing.T) {
	q := newRecentRing(diagDetailRecords + 5)
	q.begin(7, "chatcmpl-live")
	if got := q.resolve(7); got != "chatcmpl-live" {
		t.Errorf("in-flight resolve = %q", got)
	}
	for i := range diagDetailRecords + 3 {
		q.add(recentRecord{id: "r" + string(rune('a'+i%26)), seq: uint64(100 + i), diag: diagnosis{tokens: make([]tokenRow, 1)}})
	}
	q.add(recentRecord{id: "chatcmpl-live", seq: 7, diag: diagnosis{tokens: make([]tokenRow, 1)}})
	recs := q.newestFirst()
	for i, r := range recs {
		kept := r.diag.tokens != nil
		if want := i < diagDetailRecords; kept != want || r.diag.tokensReleased == want {
			t.Errorf("record %d (newest first): tokens kept %v released %v, want kept %v", i, kept, r.diag.tokensReleased, want)
		}
	}
	if got := q.resolve(7); got != "chatcmpl-live" {
		t.Errorf("resolve after the record was added = %q", got)
	}
	if got := q.resolve(99999); got != "" {
		t.Errorf("unknown identity resolves to %q", got)
	}
}

// BenchmarkDiagObserve: recording a token's diagnosis row does not
// allocate once the pooled buffer has grown.
func BenchmarkDiagObserve(b *testing.B) {
	received := time.Unix(1000, 0)
	var d diagRecorder
	var ph timing.Phases
	e := latency.TokenEvent{HasBlocking: true}
	e.Gap.Gap = time.Millisecond
	for i := range latency.MaxRetainedGaps {
		e.Index = i
		d.observe(&e, &ph, nil, 1, received)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		e.Index = i
		d.observe(&e, &ph, nil, 1, received)
	}
}
