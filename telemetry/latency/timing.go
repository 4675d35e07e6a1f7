package latency

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// The per-token vocabulary is shared with the engine through
// internal/timing: BackendPhase, BlockerKind and Blocker are the engine's own
// types (timing.BackendPhase, engine.BlockerKind, engine.Blocker), and a gap's
// phase durations are timing.Phases, so the server passes a token's record through without
// conversion and the two sides cannot drift.

// BackendPhase names a backend phase inside the actor's decode phase, in the
// closed order of docs/latency-guide.md#stall-reasons; String gives its snake_case name.
type BackendPhase = timing.BackendPhase

// BlockerKind says what kind of work a Blocker was; String gives the stall
// reason it belongs to.
type BlockerKind = timing.BlockerKind

// Blocker is one identified piece of work that delayed a token, with its
// instants on the engine's clock.
type Blocker = timing.Blocker

// Backend phases.
const (
	BackendSampling        = timing.BackendSampling
	BackendReadback        = timing.BackendReadback
	BackendGPULockWait     = timing.BackendGPULockWait
	BackendGraphCapture    = timing.BackendGraphCapture
	BackendGraphReplay     = timing.BackendGraphReplay
	BackendSynchronization = timing.BackendSynchronization
	BackendResize          = timing.BackendResize
	BackendTrim            = timing.BackendTrim
	BackendAdapter         = timing.BackendAdapter
	BackendTraining        = timing.BackendTraining
	NumBackendPhases       = timing.NumBackendPhases
)

// Blocker kinds.
const (
	// BlockerPrefill is a prefill forward pass with prompt rows of
	// Blocker.Request.
	BlockerPrefill = timing.BlockerPrefill
	// BlockerLockWait is a wait for device ownership held exclusively by
	// someone else; Request is 0.
	BlockerLockWait = timing.BlockerLockWait
	// BlockerOperation is a maintenance operation named by its identity
	// (Blocker.Op): the part of its hold inside an ownership wait, or of
	// its barrier interval inside a queued request's wait.
	BlockerOperation = timing.BlockerOperation
)

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

	Phases timing.Phases // work that overlapped the interval ending at Ready

	// Blockers are the identified pieces of work inside the token's
	// interval, largest first (engine.Token.Blockers). The latency core
	// ignores them: they are carried through to the stall span's links.
	// The slice may alias the caller's buffer; it is read only during the
	// call it is passed to.
	Blockers []Blocker
}
