package latency

import "time"

// Slot names a backend phase inside the actor's decode phase, in the
// closed order of SPEC.md section 6. It mirrors engine.Slot.
type Slot uint8

// Backend slots.
const (
	SlotSampling Slot = iota
	SlotReadback
	SlotGPULockWait
	SlotGraphCapture
	SlotGraphReplay
	SlotSynchronization
	SlotResize
	SlotTrim
	SlotAdapter
	SlotTraining
	NumSlots
)

// String returns the slot's snake_case name.
func (s Slot) String() string { return slotReason(s).String() }

// GapPhases are the phase durations that overlapped one interval of one
// request, as the engine reports them: for a token after the first, the gap
// since the previous token became ready; for the first, the time since
// submission. Its layout is identical to engine.Phases (same field names,
// types and order), so the server converts with a plain type conversion:
//
//	latency.GapPhases(tok.Phases)
//
// A backend slot counts only when its bit is set in Observed.
type GapPhases struct {
	ActorQueue       time.Duration
	Admission        time.Duration
	Prefill          time.Duration
	Decode           time.Duration
	CycleIdle        time.Duration
	ResponseDelivery time.Duration

	Slots    [NumSlots]time.Duration
	Observed uint16
}

// Observe adds d to slot s and marks it observed.
func (p *GapPhases) Observe(s Slot, d time.Duration) {
	p.Slots[s] += d
	p.Observed |= 1 << s
}

// Has reports whether slot s was observed.
func (p *GapPhases) Has(s Slot) bool { return p.Observed&(1<<s) != 0 }

// TokenTiming is everything known about one emitted token: the engine's
// record plus the two instants the server stamps. All instants come from
// one monotonic clock.
type TokenTiming struct {
	Index int // zero-based index within the request
	ID    int // the accepted token id

	Ready             time.Time // sampled and ready in the engine
	ProducerDelivered time.Time // handed to the request's channel
	HandlerReceived   time.Time // taken from the channel by the handler
	BodyEnqueued      time.Time // bytes entered the response body; zero when not streaming

	Phases GapPhases // work that overlapped the interval ending at Ready

	// Blockers are the identified pieces of work inside the token's
	// interval, largest first (engine.Token.Blockers). The latency core
	// ignores them: they are carried through to the stall span's links.
	// The slice may alias the caller's buffer; it is read only during the
	// call it is passed to.
	Blockers []Blocker
}

// BlockerKind says what kind of work a Blocker was. It mirrors
// engine.BlockerKind.
type BlockerKind uint8

// Blocker kinds.
const (
	// BlockerPrefill is a prefill forward pass with prompt rows of
	// Blocker.Request.
	BlockerPrefill BlockerKind = iota + 1
	// BlockerLockWait is a wait for device ownership held exclusively by
	// someone else; Request is 0.
	BlockerLockWait
)

// String returns the kind's name: the stall reason it belongs to.
func (k BlockerKind) String() string {
	switch k {
	case BlockerPrefill:
		return ReasonActorPrefill.String()
	case BlockerLockWait:
		return ReasonGPULockWait.String()
	}
	return "unknown"
}

// Blocker is one identified piece of work that delayed a token, with its
// instants on the engine's clock. It mirrors engine.Blocker.
type Blocker struct {
	Kind       BlockerKind
	Request    uint64 // the blocking request's identity (telemetry Request.ID); 0 when none
	Start, End time.Time
}

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// since returns b-a saturated at 0.
func since(a, b time.Time) time.Duration { return max(b.Sub(a), 0) }
