package telemetry

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// BenchmarkRequestToken is the full per-token path of a request: the
// latency core plus the live instruments (token counter, ITL histogram,
// window); with stalls, one gap in 64 is a 320 ms stall that also emits a
// kiln.stall span linked to the chat span of the request whose prefill
// blocked it, with a lock wait event. Every token carries that request's
// prefill as a blocker (ignored below the stall threshold). sampled: the
// request is exported, so measurements carry exemplars.
func BenchmarkRequestToken(b *testing.B) {
	for _, bc := range []struct {
		name    string
		sampler string
		stalls  bool
	}{
		{"sampled", SamplerAlwaysOn, true}, {"unsampled", SamplerAlwaysOff, true},
		{"sampled/no-stall", SamplerAlwaysOn, false}, {"unsampled/no-stall", SamplerAlwaysOff, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tel, err := New(Config{Sampler: bc.sampler}, WithLogOutput(&bytes.Buffer{}, false))
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = tel.Shutdown(context.Background()) }()
			_, blocker := tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
			defer blocker.End(EndInfo{})
			const n = 1 << 8
			tts := make([]latency.TokenTiming, n)
			ready := time.Duration(0)
			for i := range tts {
				p := timing.Phases{Decode: 18 * msD}
				gap := 20 * msD
				if bc.stalls && i%64 == 63 {
					p.Prefill, gap = 300*msD, 320*msD
				}
				ready += gap
				blockers := []latency.Blocker{
					{Kind: latency.BlockerPrefill, Request: blocker.ID(), Start: at(ready - gap + msD), End: at(ready - gap + msD + p.Prefill)},
					{Kind: latency.BlockerLockWait, Start: at(ready - gap), End: at(ready - gap + msD)},
				}
				tts[i] = latency.TokenTiming{Index: i, ID: i, Ready: at(ready), ProducerDelivered: at(ready + 50*time.Microsecond),
					HandlerReceived: at(ready + 80*time.Microsecond), BodyEnqueued: at(ready + 100*time.Microsecond), Phases: p,
					Blockers: blockers}
			}
			// lap shifts every instant of the cycle so that ready keeps
			// increasing and every gap is real.
			lap := func(tt latency.TokenTiming, k int) latency.TokenTiming {
				d := time.Duration(k) * ready
				tt.Ready, tt.ProducerDelivered = tt.Ready.Add(d), tt.ProducerDelivered.Add(d)
				tt.HandlerReceived, tt.BodyEnqueued = tt.HandlerReceived.Add(d), tt.BodyEnqueued.Add(d)
				return tt
			}
			_, r := tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0, Stream: true})
			laps := latency.MaxRetainedGaps / n
			for k := range laps { // fill the ring: steady state
				for _, tt := range tts {
					r.Token(lap(tt, k))
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := laps * n
			for b.Loop() {
				r.Token(lap(tts[i&(n-1)], i/n))
				i++
			}
			b.StopTimer()
			r.End(EndInfo{})
		})
	}
}
