package latency

import (
	"slices"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// MaxRetainedGaps is the size of a request's gap ring: the newest gaps
// are kept, older ones are evicted (docs/latency-guide.md#the-request-summary-latency).
const MaxRetainedGaps = 8192

// Tracker derives the timing of one request: the per-token events, the
// bounded ring of gaps with their reasons, and the running phase totals.
// It is not safe for concurrent use; one request's handler owns it. Reset
// makes it reusable (pooling keeps the ring's memory, so steady-state
// Observe does not allocate).
type Tracker struct {
	received time.Time
	emitted  int
	gaps     int       // gaps over the whole request
	first    time.Time // first token ready
	prev     time.Time // previous token ready (after clamping)

	ring    []time.Duration // retained gaps; ring once len == MaxRetainedGaps
	reasons []Reason        // parallel to ring
	head    int             // index of the oldest entry when the ring is full

	phases  phaseAcc
	scratch []float64 // sorted gap ms, reused by Summary
}

// NewTracker returns a tracker for a request received at received.
func NewTracker(received time.Time) *Tracker {
	t := &Tracker{}
	t.Reset(received)
	return t
}

// Reset clears the tracker for a new request received at received,
// keeping its buffers.
func (t *Tracker) Reset(received time.Time) {
	*t = Tracker{
		received: received,
		ring:     t.ring[:0],
		reasons:  t.reasons[:0],
		scratch:  t.scratch[:0],
	}
}

// Received is the request receipt instant the tracker counts from.
func (t *Tracker) Received() time.Time { return t.received }

// Emitted is the number of tokens observed so far.
func (t *Tracker) Emitted() int { return t.emitted }

// FirstReady is the ready instant of the first observed token, and
// LastReady that of the latest (after clamping: it never decreases); both
// are zero before the first token. The tracker is the one place a
// request's first and last token instants are kept.
func (t *Tracker) FirstReady() time.Time { return t.first }

// LastReady: see FirstReady.
func (t *Tracker) LastReady() time.Time { return t.prev }

// Observe records one emitted token and returns its timing event.
//
// Instants are clamped so that the documented invariants (docs/latency-guide.md#the-per-token-event) hold whatever the
// input: ready never decreases within the request, and ready <=
// producer_delivered <= handler_received <= body_enqueued (a zero or
// earlier instant takes the previous one's value, which makes the
// difference 0: differences saturate). A zero BodyEnqueued means the
// response is not streamed: the event reports body_enqueued =
// handler_received and client_delivery 0, and the client_delivery phase
// total stays null unless some token was streamed.
func (t *Tracker) Observe(tt TokenTiming) TokenEvent {
	ready := tt.Ready
	if t.emitted > 0 {
		ready = timing.Later(ready, t.prev)
	}
	pd := timing.Later(tt.ProducerDelivered, ready)
	hr := timing.Later(tt.HandlerReceived, pd)
	be := hr
	streamed := !tt.BodyEnqueued.IsZero()
	if streamed {
		be = timing.Later(tt.BodyEnqueued, hr)
	}
	rd, hq, cd := pd.Sub(ready), hr.Sub(pd), be.Sub(hr)

	e := TokenEvent{
		Index:               tt.Index,
		ID:                  tt.ID,
		ReadyMs:             timing.Ms(timing.Elapsed(t.received, ready)),
		ProducerDeliveredMs: timing.Ms(timing.Elapsed(t.received, pd)),
		HandlerReceivedMs:   timing.Ms(timing.Elapsed(t.received, hr)),
		BodyEnqueuedMs:      timing.Ms(timing.Elapsed(t.received, be)),
		ResponseDeliveryMs:  timing.Ms(rd),
		HandlerQueueMs:      timing.Ms(hq),
		ClientDeliveryMs:    timing.Ms(cd),
	}
	e.QueueDelayMs = e.ResponseDeliveryMs + e.HandlerQueueMs

	p := &tt.Phases
	t.phases.add(PhaseActorQueue, p.ActorQueue)
	t.phases.add(PhaseActorAdmission, p.Admission)
	t.phases.add(PhasePrefill, p.Prefill)
	t.phases.add(PhaseDecode, p.Decode)
	t.phases.add(PhaseActorCycleIdle, p.CycleIdle)
	for s := range NumBackendPhases {
		if p.Has(s) {
			t.phases.add(backendPhases[s], p.Backend[s])
		}
	}
	t.phases.add(PhaseResponseDelivery, rd)
	t.phases.add(PhaseHandlerQueue, hq)
	if streamed {
		t.phases.add(PhaseClientDelivery, cd)
	}

	if t.emitted == 0 {
		t.first = ready
	} else {
		a := Classify(ready.Sub(t.prev), p)
		t.push(a.Gap, a.Reason)
		t.phases.add(PhaseUnexplained, a.Unexplained)
		e.HasBlocking = true
		e.BlockingPhase = a.Reason
		e.BlockingPhaseMs = timing.Ms(a.Candidate)
		e.Gap = a
	}
	t.prev = ready
	t.emitted++
	return e
}

func (t *Tracker) push(gap time.Duration, r Reason) {
	t.gaps++
	if len(t.ring) < MaxRetainedGaps {
		t.ring = append(t.ring, gap)
		t.reasons = append(t.reasons, r)
		return
	}
	t.ring[t.head] = gap
	t.reasons[t.head] = r
	t.head++
	if t.head == len(t.ring) {
		t.head = 0
	}
}

// AddPhase adds a phase the server measured itself (tokenization) to the
// request's totals; the phase becomes observed even when d is 0. A
// negative d counts as 0.
func (t *Tracker) AddPhase(p Phase, d time.Duration) {
	if p < NumPhases {
		t.phases.add(p, d)
	}
}

// PhaseObserved reports whether phase p has a (non-null) total.
func (t *Tracker) PhaseObserved(p Phase) bool {
	return p < NumPhases && t.phases.observed&(1<<p) != 0
}

// AppendGaps appends the retained gaps, oldest first, as milliseconds and
// reason indexes: the compact form carried on the request's span.
func (t *Tracker) AppendGaps(gapsMs []float64, reasons []int64) ([]float64, []int64) {
	n := len(t.ring)
	for i := range n {
		j := (t.head + i) % n
		gapsMs = append(gapsMs, timing.Ms(t.ring[j]))
		reasons = append(reasons, int64(t.reasons[j]))
	}
	return gapsMs, reasons
}

// Summary builds the request summary of docs/latency-guide.md#the-request-summary-latency. Percentiles are
// computed here, over the retained gaps, never per token.
func (t *Tracker) Summary() Summary {
	s := Summary{
		EmittedTokens:       t.emitted,
		GapSamples:          t.gaps,
		RetainedGapSamples:  len(t.ring),
		GapSamplesTruncated: t.gaps > len(t.ring),
		Phases:              t.phases.totals(),
	}
	if t.emitted > 0 {
		s.TTFTMs = Float(timing.Ms(timing.Elapsed(t.received, t.first)))
	}
	if len(t.ring) == 0 {
		return s
	}
	sorted := t.scratch[:0]
	for _, g := range t.ring {
		sorted = append(sorted, timing.Ms(g))
	}
	slices.Sort(sorted)
	t.scratch = sorted
	p50 := Percentile(sorted, 0.50)
	thr := stallThresholdMs(p50)
	s.ITLP50Ms = Float(p50)
	s.ITLP99Ms = Float(Percentile(sorted, 0.99))
	s.ITLP999Ms = Float(Percentile(sorted, 0.999))
	s.MaxITLMs = Float(sorted[len(sorted)-1])
	s.StallThresholdMs = Float(thr)
	for i, g := range t.ring {
		if timing.Ms(g) >= thr {
			s.StallCount++
			s.StallReasons[t.reasons[i]]++
		}
	}
	s.UnexplainedStallCount = s.StallReasons[ReasonUnexplained]
	return s
}

// Percentile is the Hyndman-Fan type 7 percentile (NumPy's default) of an
// ascending slice: rank = p*(n-1), linear interpolation between the
// closest ranks. It returns 0 for an empty slice.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := p * float64(n-1)
	lo := int(rank)
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	return sorted[lo] + (rank-float64(lo))*(sorted[lo+1]-sorted[lo])
}
