package latency

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// FuzzAppendFloat: the hand-written float encoder agrees with
// encoding/json for every finite float.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, 1, 12.5, 1e-7, 1e21, 123456789.123, -3.25, 5e-324} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if got := string(appendFloat(nil, v)); got != "0" {
				t.Fatalf("appendFloat(%v) = %s, want 0", v, got)
			}
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFloat(nil, v); string(got) != string(want) {
			t.Fatalf("appendFloat(%v) = %s, want %s", v, got, want)
		}
	})
}

// FuzzTracker feeds arbitrary (possibly out-of-order, negative) timings
// and asserts the documented invariants (docs/latency-guide.md#the-per-token-event): events are ordered and non-negative,
// ready never decreases, queue_delay is the sum of its parts, the summary
// counts are consistent and its JSON is valid with the closed key sets.
func FuzzTracker(f *testing.F) {
	f.Add([]byte{10, 2, 3, 3, 0, 5, 1, 1, 1, 9, 200, 0, 0, 0, 4})
	f.Add([]byte{255, 255, 255, 255, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := NewTracker(t0)
		var prevReady float64
		n := 0
		for len(data) >= 8 {
			d := func(i int) time.Duration { return time.Duration(int8(data[i])) * 7 * msD }
			var p timing.Phases
			p.Prefill = d(4)
			p.Decode = d(5)
			p.ResponseDelivery = d(6)
			if data[7]&1 != 0 {
				p.Observe(BackendPhase(data[7]>>1)%NumBackendPhases, d(7))
			}
			base := time.Duration(binary.LittleEndian.Uint16(data[0:2])) * msD
			tt := TokenTiming{Index: n, ID: n, Ready: at(base), ProducerDelivered: at(base + d(2)), HandlerReceived: at(base + d(3)), Phases: p}
			if data[2]&1 != 0 {
				tt.BodyEnqueued = at(base + d(2) + d(3))
			}
			e := tr.Observe(tt)
			if !(0 <= e.ReadyMs && e.ReadyMs <= e.ProducerDeliveredMs && e.ProducerDeliveredMs <= e.HandlerReceivedMs && e.HandlerReceivedMs <= e.BodyEnqueuedMs) {
				t.Fatalf("token %d: instants out of order: %+v", n, e)
			}
			if e.ResponseDeliveryMs < 0 || e.HandlerQueueMs < 0 || e.ClientDeliveryMs < 0 || e.QueueDelayMs != e.ResponseDeliveryMs+e.HandlerQueueMs {
				t.Fatalf("token %d: bad hops %+v", n, e)
			}
			if n > 0 && e.ReadyMs < prevReady || e.HasBlocking != (n > 0) || e.BlockingPhase == ReasonHandlerQueue || e.BlockingPhase == ReasonClientDelivery {
				t.Fatalf("token %d: ready %v after %v, blocking %v %v", n, e.ReadyMs, prevReady, e.HasBlocking, e.BlockingPhase)
			}
			if !json.Valid(e.AppendJSON(nil)) {
				t.Fatalf("invalid event JSON %s", e.AppendJSON(nil))
			}
			prevReady = e.ReadyMs
			n++
			data = data[8:]
		}
		s := tr.Summary()
		if s.EmittedTokens != n || s.GapSamples != max(n-1, 0) || s.StallReasons.Total() != s.StallCount ||
			s.UnexplainedStallCount != s.StallReasons[ReasonUnexplained] || s.TTFTMs.Valid != (n > 0) || s.ITLP50Ms.Valid != (n > 1) {
			t.Fatalf("inconsistent summary after %d tokens: %+v", n, s)
		}
		if s.ITLP50Ms.Valid && !(s.ITLP50Ms.V <= s.ITLP99Ms.V && s.ITLP99Ms.V <= s.ITLP999Ms.V && s.ITLP999Ms.V <= s.MaxITLMs.V) {
			t.Fatalf("percentiles out of order: %+v", s)
		}
		var m map[string]any
		if err := json.Unmarshal(s.AppendJSON(nil), &m); err != nil || len(m) != 14 {
			t.Fatalf("summary JSON: %v, %d keys", err, len(m))
		}
	})
}
