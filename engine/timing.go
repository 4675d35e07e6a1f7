package engine

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// The per-token vocabulary is defined once in internal/timing and shared
// with the latency core (latency.Slot, latency.GapPhases, latency.Blocker
// are the same types), so a Token's record reaches telemetry without
// conversion and the two sides cannot drift.
type (
	// Slot names a backend phase inside the actor's decode phase
	// (timing.SlotSampling, timing.SlotGPULockWait, ...).
	Slot = timing.Slot
	// Phases are the durations of the actor's work that overlapped one
	// interval of one request (timing.Phases documents each field).
	Phases = timing.Phases
	// BlockerKind says what kind of work a Blocker was.
	BlockerKind = timing.BlockerKind
	// Blocker is one identified piece of work inside a token's interval.
	Blocker = timing.Blocker
)

// Blocker kinds the actor reports.
const (
	BlockerPrefill  = timing.BlockerPrefill
	BlockerLockWait = timing.BlockerLockWait
)

// MaxBlockers bounds the blockers a Token carries.
const MaxBlockers = 4

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
