package latency

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/timing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// t0 is an arbitrary receipt instant; time.Time values from time.Unix carry
// no monotonic reading, which is fine for differences.
var t0 = time.Unix(1_700_000_000, 0)

func at(d time.Duration) time.Time { return t0.Add(d) }

// tok is a streamed token ready at r ms with hops of 2, 3 and 3 ms.
func tok(i int, r time.Duration, p timing.Phases) TokenTiming {
	return TokenTiming{
		Index: i, ID: 4000 + i,
		Ready: at(r), ProducerDelivered: at(r + 2*msD), HandlerReceived: at(r + 5*msD), BodyEnqueued: at(r + 8*msD),
		Phases: p,
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestTokenEventExample(t *testing.T) {
	// A worked example: token 7, ready 12 ms,
	// hops of 2, 3, 3 ms, and a gap blocked by a 280 ms prefill chunk.
	tr := NewTracker(t0)
	tr.Observe(tok(6, -300*msD, timing.Phases{})) // ready before receipt: saturates at 0
	tt := TokenTiming{
		Index: 7, ID: 4242,
		Ready: at(12 * msD), ProducerDelivered: at(14 * msD), HandlerReceived: at(17 * msD), BodyEnqueued: at(20 * msD),
		Phases: timing.Phases{Prefill: 280 * msD, Decode: 10 * msD},
	}
	e := tr.Observe(tt)
	want := TokenEvent{
		Index: 7, ID: 4242,
		ReadyMs: 12, ProducerDeliveredMs: 14, HandlerReceivedMs: 17, BodyEnqueuedMs: 20,
		ResponseDeliveryMs: 2, HandlerQueueMs: 3, QueueDelayMs: 5, ClientDeliveryMs: 3,
		HasBlocking: true, BlockingPhase: ReasonActorPrefill, BlockingPhaseMs: 280,
		// the previous token was ready at -300 ms: the gap is 312 ms
		Gap: Attribution{Gap: 312 * msD, Reason: ReasonActorPrefill, Chosen: ReasonActorPrefill, Candidate: 280 * msD, Unexplained: 22 * msD},
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "token_event.json", got)
}

func TestTokenEventFirstTokenNulls(t *testing.T) {
	tr := NewTracker(t0)
	e := tr.Observe(tok(0, 40*msD, timing.Phases{ActorQueue: 30 * msD}))
	got := string(e.AppendJSON(nil))
	want := `{"object":"kiln.token_timing","source":"batching_engine","token_index":0,"token_id":4000,"ready_ms":40,"producer_delivered_ms":42,"handler_received_ms":45,"body_enqueued_ms":48,"response_delivery_ms":2,"handler_queue_ms":3,"queue_delay_ms":5,"client_delivery_ms":3,"blocking_phase":null,"blocking_phase_ms":null}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first event (-want +got):\n%s", diff)
	}
}

func TestObserveSaturation(t *testing.T) {
	tests := []struct {
		name string
		prev *TokenTiming
		tt   TokenTiming
		want TokenEvent
	}{
		{
			name: "instants out of order saturate; differences are never negative",
			tt:   TokenTiming{Ready: at(10 * msD), ProducerDelivered: at(5 * msD), HandlerReceived: at(4 * msD), BodyEnqueued: at(30 * msD)},
			want: TokenEvent{ReadyMs: 10, ProducerDeliveredMs: 10, HandlerReceivedMs: 10, BodyEnqueuedMs: 30, ClientDeliveryMs: 20},
		},
		{
			name: "ready before receipt counts from 0",
			tt:   TokenTiming{Ready: at(-10 * msD), ProducerDelivered: at(-4 * msD), HandlerReceived: at(1 * msD)},
			want: TokenEvent{ReadyMs: 0, ProducerDeliveredMs: 0, HandlerReceivedMs: 1, BodyEnqueuedMs: 1, ResponseDeliveryMs: 6, HandlerQueueMs: 5, QueueDelayMs: 11},
		},
		{
			name: "not streamed: body_enqueued is handler_received",
			tt:   TokenTiming{Ready: at(10 * msD), ProducerDelivered: at(11 * msD), HandlerReceived: at(13 * msD)},
			want: TokenEvent{ReadyMs: 10, ProducerDeliveredMs: 11, HandlerReceivedMs: 13, BodyEnqueuedMs: 13, ResponseDeliveryMs: 1, HandlerQueueMs: 2, QueueDelayMs: 3},
		},
		{
			name: "ready never decreases within a request",
			prev: &TokenTiming{Ready: at(50 * msD)},
			tt:   TokenTiming{Index: 1, Ready: at(40 * msD), ProducerDelivered: at(45 * msD), HandlerReceived: at(60 * msD)},
			want: TokenEvent{
				Index: 1, ReadyMs: 50, ProducerDeliveredMs: 50, HandlerReceivedMs: 60, BodyEnqueuedMs: 60, HandlerQueueMs: 10, QueueDelayMs: 10,
				HasBlocking: true, BlockingPhase: ReasonResponseDelivery,
				Gap: Attribution{Reason: ReasonResponseDelivery, Chosen: ReasonResponseDelivery},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(t0)
			if tc.prev != nil {
				tr.Observe(*tc.prev)
			}
			got := tr.Observe(tc.tt)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

// nulls returns PhaseTotals with the given phases set.
func totals(kv ...any) PhaseTotals {
	var p PhaseTotals
	for i := 0; i < len(kv); i += 2 {
		p[kv[i].(Phase)] = Float(kv[i+1].(float64))
	}
	return p
}

func TestSummary(t *testing.T) {
	type step struct {
		ready  time.Duration
		phases timing.Phases
	}
	steps := func(readies ...time.Duration) []step {
		var s []step
		for _, r := range readies {
			s = append(s, step{ready: r})
		}
		return s
	}
	tests := []struct {
		name      string
		tokens    []step
		streamed  bool
		addPhases map[Phase]time.Duration
		want      Summary
	}{
		{
			name: "zero tokens: every nullable field is null, counts are zero",
			want: Summary{},
		},
		{
			name:      "zero tokens with tokenization measured",
			addPhases: map[Phase]time.Duration{PhaseTokenization: 1500 * time.Microsecond},
			want:      Summary{Phases: totals(PhaseTokenization, 1.5)},
		},
		{
			name:     "one token: TTFT and no ITL",
			tokens:   []step{{ready: 120 * msD, phases: timing.Phases{ActorQueue: 20 * msD, Admission: msD, Prefill: 90 * msD}}},
			streamed: true,
			want: Summary{
				EmittedTokens: 1, TTFTMs: Float(120),
				Phases: totals(PhaseActorQueue, 20.0, PhaseActorAdmission, 1.0, PhasePrefill, 90.0, PhaseDecode, 0.0, PhaseActorCycleIdle, 0.0,
					PhaseResponseDelivery, 2.0, PhaseHandlerQueue, 3.0, PhaseClientDelivery, 3.0),
			},
		},
		{
			name:   "two tokens: one gap is every percentile; not streamed leaves client_delivery null",
			tokens: []step{{ready: 100 * msD}, {ready: 130 * msD, phases: timing.Phases{Decode: 25 * msD}}},
			want: Summary{
				EmittedTokens: 2, GapSamples: 1, RetainedGapSamples: 1, TTFTMs: Float(100),
				ITLP50Ms: Float(30), ITLP99Ms: Float(30), ITLP999Ms: Float(30), MaxITLMs: Float(30), StallThresholdMs: Float(250),
				Phases: totals(PhaseActorQueue, 0.0, PhaseActorAdmission, 0.0, PhasePrefill, 0.0, PhaseDecode, 25.0, PhaseActorCycleIdle, 0.0,
					PhaseResponseDelivery, 4.0, PhaseHandlerQueue, 6.0, PhaseUnexplained, 5.0),
			},
		},
		{
			name:   "three tokens: p50 interpolates between two gaps",
			tokens: steps(0, 10*msD, 30*msD),
			// gaps 10, 20: p50 = 15, p99 = 10 + 0.99*10, p999 = 10 + 0.999*10
			want: Summary{
				EmittedTokens: 3, GapSamples: 2, RetainedGapSamples: 2, TTFTMs: Float(0),
				ITLP50Ms: Float(15), ITLP99Ms: Float(19.9), ITLP999Ms: Float(19.99), MaxITLMs: Float(20), StallThresholdMs: Float(250),
				Phases: totals(PhaseActorQueue, 0.0, PhaseActorAdmission, 0.0, PhasePrefill, 0.0, PhaseDecode, 0.0, PhaseActorCycleIdle, 0.0,
					PhaseResponseDelivery, 6.0, PhaseHandlerQueue, 9.0, PhaseUnexplained, 30.0),
			},
		},
		{
			name: "threshold is 250 when 5 x p50 is smaller; stalls by reason",
			// gaps: 10, 10, 10, 300 (prefill 280), 260 (nothing measured)
			tokens: []step{{ready: 0}, {ready: 10 * msD}, {ready: 20 * msD}, {ready: 30 * msD},
				{ready: 330 * msD, phases: timing.Phases{Prefill: 280 * msD}}, {ready: 590 * msD}},
			want: Summary{
				EmittedTokens: 6, GapSamples: 5, RetainedGapSamples: 5, TTFTMs: Float(0),
				ITLP50Ms: Float(10), ITLP99Ms: Float(298.4), ITLP999Ms: Float(299.84), MaxITLMs: Float(300), StallThresholdMs: Float(250),
				StallCount: 2, UnexplainedStallCount: 1,
				StallReasons: ReasonCounts{ReasonActorPrefill: 1, ReasonUnexplained: 1},
				Phases: totals(PhaseActorQueue, 0.0, PhaseActorAdmission, 0.0, PhasePrefill, 280.0, PhaseDecode, 0.0, PhaseActorCycleIdle, 0.0,
					PhaseResponseDelivery, 12.0, PhaseHandlerQueue, 18.0, PhaseUnexplained, 30.0+20+260),
			},
		},
		{
			name: "threshold is 5 x p50 when larger; a gap equal to it is a stall",
			// gaps 100, 100, 100, 500, 499: p50 100, threshold 500
			tokens: steps(0, 100*msD, 200*msD, 300*msD, 800*msD, 1299*msD),
			want: Summary{
				EmittedTokens: 6, GapSamples: 5, RetainedGapSamples: 5, TTFTMs: Float(0),
				ITLP50Ms: Float(100), ITLP99Ms: Float(499.96), ITLP999Ms: Float(499.996), MaxITLMs: Float(500), StallThresholdMs: Float(500),
				StallCount: 1, UnexplainedStallCount: 1, StallReasons: ReasonCounts{ReasonUnexplained: 1},
				Phases: totals(PhaseActorQueue, 0.0, PhaseActorAdmission, 0.0, PhasePrefill, 0.0, PhaseDecode, 0.0, PhaseActorCycleIdle, 0.0,
					PhaseResponseDelivery, 12.0, PhaseHandlerQueue, 18.0, PhaseUnexplained, 1299.0),
			},
		},
		{
			name: "slots are null unless observed; observed slots sum",
			tokens: []step{
				{ready: 0, phases: slots(BackendSampling, msD)},
				{ready: 40 * msD, phases: withDecode(slots(BackendSampling, 2*msD, BackendGPULockWait, time.Duration(0)), 40*msD)},
			},
			addPhases: map[Phase]time.Duration{PhaseTokenization: 2 * msD},
			want: Summary{
				EmittedTokens: 2, GapSamples: 1, RetainedGapSamples: 1, TTFTMs: Float(0),
				ITLP50Ms: Float(40), ITLP99Ms: Float(40), ITLP999Ms: Float(40), MaxITLMs: Float(40), StallThresholdMs: Float(250),
				Phases: totals(PhaseActorQueue, 0.0, PhaseActorAdmission, 0.0, PhaseTokenization, 2.0, PhasePrefill, 0.0, PhaseDecode, 40.0,
					PhaseActorCycleIdle, 0.0, PhaseSampling, 3.0, PhaseGPULockWait, 0.0,
					PhaseResponseDelivery, 4.0, PhaseHandlerQueue, 6.0, PhaseUnexplained, 0.0),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(t0)
			for p, d := range tc.addPhases {
				tr.AddPhase(p, d)
			}
			for i, s := range tc.tokens {
				tt := tok(i, s.ready, s.phases)
				if !tc.streamed {
					tt.BodyEnqueued = time.Time{}
				}
				tr.Observe(tt)
			}
			got := tr.Summary()
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(approx)); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if got.StallReasons.Total() != got.StallCount {
				t.Errorf("stall_reasons sum %d != stall_count %d", got.StallReasons.Total(), got.StallCount)
			}
		})
	}
}

func withDecode(p timing.Phases, d time.Duration) timing.Phases { p.Decode = d; return p }

// approx compares floats to 1e-9 relative: the hand-computed decimals
// (19.9) are not exactly representable.
func approx(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, a, -a, b, -b)
}

func TestSummaryTruncation(t *testing.T) {
	// 8202 gaps of 1, 2, ..., 8202 ms: the ring keeps the newest 8192,
	// 11 .. 8202 ms.
	const gaps = MaxRetainedGaps + 10
	tr := NewTracker(t0)
	ready := time.Duration(0)
	tr.Observe(tok(0, ready, timing.Phases{}))
	for i := 1; i <= gaps; i++ {
		ready += time.Duration(i) * msD
		tr.Observe(tok(i, ready, timing.Phases{}))
	}
	s := tr.Summary()
	if s.GapSamples != gaps || s.RetainedGapSamples != MaxRetainedGaps || !s.GapSamplesTruncated || s.EmittedTokens != gaps+1 {
		t.Fatalf("counts: gap_samples %d retained %d truncated %v emitted %d", s.GapSamples, s.RetainedGapSamples, s.GapSamplesTruncated, s.EmittedTokens)
	}
	ms, reasons := tr.AppendGaps(nil, nil)
	if len(ms) != MaxRetainedGaps || ms[0] != 11 || ms[len(ms)-1] != 8202 || len(reasons) != len(ms) {
		t.Fatalf("retained gaps: len %d first %v last %v", len(ms), ms[0], ms[len(ms)-1])
	}
	// p50 over 11..8202: rank 0.5*8191 = 4095.5 -> 11+4095.5
	if !approx(s.ITLP50Ms.V, 4106.5) || s.MaxITLMs.V != 8202 {
		t.Errorf("p50 %v max %v, want 4106.5 8202", s.ITLP50Ms.V, s.MaxITLMs.V)
	}
	// threshold 5*4106.5 = 20532.5: nothing stalls even though every gap
	// is over 250 ms
	if s.StallCount != 0 || s.StallThresholdMs.V != 20532.5 {
		t.Errorf("stall_count %d threshold %v", s.StallCount, s.StallThresholdMs.V)
	}
	// the unexplained total keeps the whole request, evicted gaps included
	if want := float64(gaps*(gaps+1)/2) - 0; !approx(s.Phases[PhaseUnexplained].V, want) {
		t.Errorf("unexplained_ms %v, want %v", s.Phases[PhaseUnexplained].V, want)
	}
	// exactly MaxRetainedGaps gaps is not truncated
	tr.Reset(t0)
	for i := 0; i <= MaxRetainedGaps; i++ {
		tr.Observe(tok(i, time.Duration(i)*msD, timing.Phases{}))
	}
	if s := tr.Summary(); s.GapSamplesTruncated || s.RetainedGapSamples != MaxRetainedGaps {
		t.Errorf("8192 gaps: truncated %v retained %d", s.GapSamplesTruncated, s.RetainedGapSamples)
	}
}

func TestSummaryJSON(t *testing.T) {
	tr := NewTracker(t0)
	empty, err := json.Marshal(tr.Summary())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary_empty.json", empty)

	tr.AddPhase(PhaseTokenization, 1250*time.Microsecond)
	tr.Observe(tok(0, 50*msD, timing.Phases{ActorQueue: 10 * msD, Prefill: 35 * msD}))
	tr.Observe(tok(1, 60*msD, withDecode(slots(BackendSampling, msD), 9*msD)))
	tr.Observe(tok(2, 400*msD, timing.Phases{Decode: 10 * msD, Prefill: 320 * msD}))
	full, err := json.Marshal(tr.Summary())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json", full)

	// Closed objects: exactly the documented keys, every one present.
	var m map[string]any
	if err := json.Unmarshal(full, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 14 || len(m["stall_reasons"].(map[string]any)) != 19 || len(m["phases"].(map[string]any)) != 20 {
		t.Errorf("key counts: summary %d reasons %d phases %d", len(m), len(m["stall_reasons"].(map[string]any)), len(m["phases"].(map[string]any)))
	}
}

func TestResetReuses(t *testing.T) {
	tr := NewTracker(t0)
	for i := range 100 {
		tr.Observe(tok(i, time.Duration(i)*msD, timing.Phases{}))
	}
	tr.Reset(at(time.Second))
	if diff := cmp.Diff(Summary{}, tr.Summary()); diff != "" {
		t.Errorf("after Reset (-want +got):\n%s", diff)
	}
	if cap(tr.ring) < 99 {
		t.Errorf("Reset dropped the ring's memory: cap %d", cap(tr.ring))
	}
}
