package telemetry

import (
	"math"
	"time"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// RequestRecords are the values, in seconds, that one chat span's
// observations record into the request families of docs/latency-guide.md#prometheus: its
// outcome (kiln_requests_total), duration, TTFT, time per output token
// (the GenAI histogram) and each non-null phase. A null field records
// nothing. Processor.OnEnd and the Collector connector both record
// exactly these, so the two hosts agree on which values count.
type RequestRecords struct {
	Outcome  Outcome
	Duration latency.NullFloat
	TTFT     latency.NullFloat
	TPOT     latency.NullFloat
	Phases   latency.PhaseTotals
}

// Records derives the request records from o: a negative duration or
// TTFT is not recorded, TPOT needs a TTFT, a duration not before it and
// more than one emitted token. It does not allocate.
func (o *Observations) Records() RequestRecords {
	r := RequestRecords{Outcome: o.Outcome}
	dur, ttft := o.DurationMs, o.Summary.TTFTMs
	if dur.Valid && dur.V >= 0 {
		r.Duration = latency.Float(dur.V / 1000)
	}
	if ttft.Valid && ttft.V >= 0 {
		r.TTFT = latency.Float(ttft.V / 1000)
		if n := o.Summary.EmittedTokens; dur.Valid && dur.V >= ttft.V && n > 1 {
			r.TPOT = latency.Float((dur.V - ttft.V) / 1000 / float64(n-1))
		}
	}
	for ph, v := range o.Summary.Phases {
		if v.Valid {
			r.Phases[ph] = latency.Float(v.V / 1000)
		}
	}
	return r
}

// GapFromMs is the gap exported in milliseconds (AttrGapsMs,
// AttrStallGapMs, written as float64(d)/1e6) back as the Duration it was:
// the nanoseconds are recovered exactly, so its Seconds() is bit for bit
// the value Processor.ObserveToken recorded live into the ITL histogram.
func GapFromMs(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// IsStall reports whether a gap is a stall under the fixed threshold
// (latency.StallThreshold) that kiln_token_stalls_total counts.
func IsStall(gap time.Duration) bool { return latency.IsStall(gap) }
