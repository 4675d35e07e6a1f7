package engine

import (
	"time"

	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/internal/timing"
)

// The per-token vocabulary is defined once in internal/timing and shared
// with the latency core: a token's phase durations are timing.Phases (its
// Backend durations indexed by timing.BackendPhase), and Blocker (one identified piece of work
// inside a token's interval) and BlockerKind are latency.Blocker and
// latency.BlockerKind, so a Token's record reaches telemetry without
// conversion and the two sides cannot drift.
type (
	Blocker     = timing.Blocker
	BlockerKind = timing.BlockerKind
)

// Blocker kinds the actor reports.
const (
	BlockerPrefill   = timing.BlockerPrefill
	BlockerLockWait  = timing.BlockerLockWait
	BlockerOperation = timing.BlockerOperation
)

// MaxBlockers bounds the blockers a Token carries.
const MaxBlockers = 4

// Token is the timing record of one emitted token, delivered on the
// request's channel. Instants come from the engine's clock (monotonic).
type Token struct {
	Index     int           // zero-based index within the request
	ID        int           // the accepted token id (special tokens included)
	Ready     time.Time     // the token was sampled and ready
	Delivered time.Time     // the actor handed it to the request's channel
	Phases    timing.Phases // work that overlapped the interval ending at Ready
	// Logprob and TopLogprobs are set when the request asked for log
	// probabilities (Request.Logprobs).
	Logprob     float32
	TopLogprobs []sampling.TokenLogprob

	// Blockers[:NumBlockers] are the largest identified pieces of work
	// inside the token's interval, largest first (on equal durations the
	// earlier first). The actor remembers only its recent work (a ring of
	// segmentRing segments), so for a long interval (a first token after a
	// long queue wait) older work may be missing; the Phases still count
	// all of it.
	Blockers    [MaxBlockers]Blocker
	NumBlockers int
}
