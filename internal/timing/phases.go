package timing

import "time"

// Phases are the wall-time durations of the actor's work that overlapped one
// interval of one request: for a token after the first, the gap since the
// request's previous token became ready; for the first token, the time since
// the request was submitted. A batched step shared with other requests is
// charged in full to every request that was waiting in that interval; the
// phases overlap and are not an additive breakdown of the interval.
//
// Actor phases are always observed. A backend phase is meaningful only when
// its bit is set in Observed: a CPU path never observes graph capture,
// replay, synchronization or readback, and maintenance phases are observed
// only when such an operation overlapped the interval.
type Phases struct {
	ActorQueue       time.Duration // submitted until admission began (first token only)
	Admission        time.Duration // admission work (slot, KV reservation)
	Prefill          time.Duration // prefill chunks, this request's and others'
	Decode           time.Duration // batched decode steps, including the backend phases inside them
	CycleIdle        time.Duration // cooperative idle between cycles
	ResponseDelivery time.Duration // the actor handing tokens to request channels

	Backend  [NumBackendPhases]time.Duration
	Observed uint16 // bit i set: Backend[i] was observed on this path
}

// Observe adds d to backend phase s and marks it observed.
func (p *Phases) Observe(s BackendPhase, d time.Duration) {
	p.Backend[s] += d
	p.Observed |= 1 << s
}

// Has reports whether backend phase s was observed.
func (p *Phases) Has(s BackendPhase) bool { return p.Observed&(1<<s) != 0 }
