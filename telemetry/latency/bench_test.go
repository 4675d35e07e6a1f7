package latency

import (
	"testing"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// benchTimings is a cyclic stream of realistic token timings: 20 ms gaps
// with a 300 ms prefill stall every 64th token.
func benchTimings(n int) []TokenTiming {
	tts := make([]TokenTiming, n)
	ready := time.Duration(0)
	for i := range tts {
		p := timing.Phases{Decode: 18 * msD, CycleIdle: msD}
		p.Observe(BackendSampling, 200*time.Microsecond)
		gap := 20 * msD
		if i%64 == 63 {
			p.Prefill = 300 * msD
			gap = 320 * msD
		}
		ready += gap
		tts[i] = TokenTiming{Index: i, ID: i, Ready: at(ready), ProducerDelivered: at(ready + 50*time.Microsecond),
			HandlerReceived: at(ready + 80*time.Microsecond), BodyEnqueued: at(ready + 120*time.Microsecond), Phases: p}
	}
	return tts
}

// lap shifts a cyclic timing by k laps so ready keeps increasing and every
// gap is real.
func lap(tts []TokenTiming, tt TokenTiming, k int) TokenTiming {
	d := time.Duration(k) * tts[len(tts)-1].Ready.Sub(t0)
	tt.Ready, tt.ProducerDelivered = tt.Ready.Add(d), tt.ProducerDelivered.Add(d)
	tt.HandlerReceived, tt.BodyEnqueued = tt.HandlerReceived.Add(d), tt.BodyEnqueued.Add(d)
	return tt
}

// BenchmarkObserve is the per-token derivation in steady state (the ring
// is full and wraps).
func BenchmarkObserve(b *testing.B) {
	const n = 1 << 8
	tts := benchTimings(n)
	tr := NewTracker(t0)
	laps := MaxRetainedGaps / n
	for k := range laps {
		for _, tt := range tts {
			tr.Observe(lap(tts, tt, k))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := laps * n
	for b.Loop() {
		tr.Observe(lap(tts, tts[i&(n-1)], i/n))
		i++
	}
}

// BenchmarkObserveWindowAdd is the whole latency-core cost of one token:
// Observe, the window add, and the event's JSON into a reused buffer.
func BenchmarkObserveWindowAdd(b *testing.B) {
	const n = 1 << 8
	tts := benchTimings(n)
	tr := NewTracker(t0)
	w := NewWindow(0)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		tt := lap(tts, tts[i&(n-1)], i/n)
		e := tr.Observe(tt)
		if e.HasBlocking {
			w.Add(tt.Ready, e.Gap.Gap, e.Gap.Reason)
		}
		buf = e.AppendJSON(buf[:0])
		i++
	}
}

// BenchmarkSummary builds the summary of a full 8192-gap ring (done once
// per request, not per token).
func BenchmarkSummary(b *testing.B) {
	tr := NewTracker(t0)
	for _, tt := range benchTimings(MaxRetainedGaps + 1) {
		tr.Observe(tt)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = tr.Summary()
	}
}

// BenchmarkWindowStats is one /v1/stats/decode read over a full window.
func BenchmarkWindowStats(b *testing.B) {
	w := NewWindow(0)
	for i := range DefaultWindowCapacity {
		w.Add(at(time.Duration(i)*time.Microsecond), 20*msD, ReasonActorDecode)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = w.Stats(at(time.Second))
	}
}

// BenchmarkWindowAddUnderStats is the per-token Add while another
// goroutine reads a full 65,536-entry window in a loop (a scrape or a
// dashboard poll that never stops): Add must not wait behind the reader.
// The timed loop includes two clock reads per Add.
func BenchmarkWindowAddUnderStats(b *testing.B) {
	w := NewWindow(0)
	for i := range DefaultWindowCapacity {
		w.Add(at(time.Duration(i)*time.Microsecond), 20*msD, ReasonActorDecode)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				_ = w.Stats(at(time.Second))
			}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	i := DefaultWindowCapacity
	var worst time.Duration
	slow := 0
	for b.Loop() {
		t := time.Now()
		w.Add(at(time.Duration(i)*time.Microsecond), 20*msD, ReasonActorDecode)
		if d := time.Since(t); d > worst {
			worst = d
		} else if d > 10*time.Microsecond {
			slow++
		}
		i++
	}
	b.StopTimer()
	// The mean hides a wait behind a reader; the worst Add and the share
	// of Adds over 10 us show it (reported, never asserted).
	b.ReportMetric(float64(worst.Nanoseconds()), "worst-ns")
	b.ReportMetric(float64(slow)*1e6/float64(b.N), "slow-per-1e6")
	close(stop)
	<-done
}

// BenchmarkWindowAdd is the per-token Add alone, on a full window.
func BenchmarkWindowAdd(b *testing.B) {
	w := NewWindow(0)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		w.Add(at(time.Duration(i)*time.Microsecond), 20*msD, ReasonActorDecode)
		i++
	}
}
