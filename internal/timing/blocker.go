package timing

import "time"

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
	// BlockerOperation is a maintenance operation, Blocker.Op, that held
	// device ownership while the actor waited (the part of its hold inside
	// the wait), or the actor barrier while the request waited for
	// admission (the part of the barrier interval inside the token's).
	BlockerOperation
)

// String returns the kind's name: the stall reason it belongs to.
func (k BlockerKind) String() string {
	switch k {
	case BlockerPrefill:
		return "actor_prefill"
	case BlockerLockWait:
		return BackendGPULockWait.String()
	case BlockerOperation:
		return "operation"
	}
	return "unknown"
}

// Blocker is one identified piece of work that delayed a token: it lies
// wholly inside the token's interval (from the request's previous token's
// ready instant, or its submission for the first token, to this token's
// ready instant).
//
// A prefill pass that held the prompt rows of several requests yields one
// Blocker per request, each with the whole pass's instants: a forward
// pass is not divisible, so each of them delayed the token by all of it.
type Blocker struct {
	Kind       BlockerKind
	OpKind     OpKind    // an operation's kind (BlockerOperation)
	Request    uint64    // the prefilled request's identity (engine Request.ID); 0 for a lock wait or an unnamed request
	Op         uint64    // the operation's identity (Operation.ID), for BlockerOperation
	Start, End time.Time // the work's instants (engine clock)
}

// Duration is End - Start, at least 0.
func (b *Blocker) Duration() time.Duration { return Elapsed(b.Start, b.End) }
