package engine

import "time"

// Slot names a backend phase that sits inside the actor's broader phases
// (SPEC.md section 6). The order is the closed order of the contract.
type Slot uint8

// Backend slots.
const (
	SlotSampling Slot = iota
	SlotReadback
	SlotLockWait // gpu_lock_wait: waiting for device ownership
	SlotGraphCapture
	SlotGraphReplay
	SlotSynchronization
	SlotResize
	SlotTrim
	SlotAdapter
	SlotTraining
	NumSlots
)

var slotNames = [NumSlots]string{
	"sampling", "readback", "gpu_lock_wait", "graph_capture", "graph_replay",
	"synchronization", "resize", "trim", "adapter", "training",
}

func (s Slot) String() string {
	if s < NumSlots {
		return slotNames[s]
	}
	return "unknown"
}

// Phases are the wall-time durations of the actor's work that overlapped one
// interval of one request: for a token after the first, the gap since the
// request's previous token became ready; for the first token, the time since
// the request was submitted. A batched step shared with other requests is
// charged in full to every request that was waiting in that interval; the
// phases overlap and are not an additive breakdown of the interval.
//
// Actor phases are always observed. A backend slot is meaningful only when
// its bit is set in Observed: a CPU path never observes graph capture,
// replay, synchronization or readback, and maintenance slots are observed
// only when such an operation overlapped the interval.
type Phases struct {
	ActorQueue       time.Duration // submitted until admission began (first token only)
	Admission        time.Duration // admission work (slot, KV reservation)
	Prefill          time.Duration // prefill chunks, this request's and others'
	Decode           time.Duration // batched decode steps, including the backend slots inside them
	CycleIdle        time.Duration // cooperative idle between cycles
	ResponseDelivery time.Duration // the actor handing tokens to request channels

	Slots    [NumSlots]time.Duration
	Observed uint16 // bit i set: Slots[i] was observed on this path
}

// Observe adds d to slot s and marks it observed.
func (p *Phases) Observe(s Slot, d time.Duration) {
	p.Slots[s] += d
	p.Observed |= 1 << s
}

// Has reports whether slot s was observed.
func (p *Phases) Has(s Slot) bool { return p.Observed&(1<<s) != 0 }

// BlockerKind says what kind of work a Blocker was.
type BlockerKind uint8

// Blocker kinds.
const (
	// BlockerPrefill is a prefill forward pass that had prompt rows of
	// Blocker.Request (possibly the token's own request: its prefill is
	// what delayed its first token).
	BlockerPrefill BlockerKind = iota + 1
	// BlockerLockWait is the actor waiting for device ownership held or
	// awaited exclusively by someone else (maintenance); Request is 0.
	BlockerLockWait
)

func (k BlockerKind) String() string {
	switch k {
	case BlockerPrefill:
		return "actor_prefill"
	case BlockerLockWait:
		return "gpu_lock_wait"
	}
	return "unknown"
}

// MaxBlockers bounds the blockers a Token carries.
const MaxBlockers = 4

// Blocker is one identified piece of work that delayed a token: it lies
// wholly inside the token's interval (from the request's previous token's
// Ready, or its Submitted for the first token, to this token's Ready).
//
// A prefill pass that held the prompt rows of several requests yields one
// Blocker per request, each with the whole pass's instants: a forward
// pass is not divisible, so each of them delayed the token by all of it.
type Blocker struct {
	Kind       BlockerKind
	Request    uint64    // Request.ID of the prefilled request; 0 for a lock wait or an unnamed request
	Start, End time.Time // the work's instants (engine clock)
}

// Duration is End - Start, at least 0.
func (b *Blocker) Duration() time.Duration { return sub(b.End, b.Start) }

// Token is the timing record of one emitted token, delivered on the
// request's channel. Instants come from the engine's clock (monotonic).
type Token struct {
	Index     int       // zero-based index within the request
	ID        int       // the accepted token id (special tokens included)
	Ready     time.Time // the token was sampled and ready
	Delivered time.Time // the actor handed it to the request's channel
	Phases    Phases    // work that overlapped the interval ending at Ready

	// Blockers[:NumBlockers] are the largest identified pieces of work
	// inside the token's interval, largest first (on equal durations the
	// earlier first). The actor remembers only its recent work (a ring of
	// segmentRing segments), so for a long interval (a first token after a
	// long queue wait) older work may be missing; the Phases still count
	// all of it.
	Blockers    [MaxBlockers]Blocker
	NumBlockers int
}
