package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// KVResizer is a Backend whose KV arena can change its number of slots at
// run time. *llama.State implements it. ResizeSlots runs on the actor
// goroutine at the barrier, with no sequence in flight, and returns the
// bytes of the KV caches it dropped.
type KVResizer interface {
	ResizeSlots(n int) int64
	KVBytesPerPos() int64
}

// ErrInvalidKVSize is a resize to a size the engine refuses: below one
// context, or beyond its bound (KVMaxTokens). The message names the bound.
var ErrInvalidKVSize = errors.New("engine: invalid KV size")

// ErrResizeUnsupported means the backend's KV arena cannot be resized.
var ErrResizeUnsupported = errors.New("engine: the backend cannot resize its KV arena")

// Resize directions: the closed set of kiln_kv_resizes_total's direction.
const (
	ResizeGrow   = "grow"
	ResizeShrink = "shrink"
	ResizeNone   = "none"
)

// ResizeResult is what one KV resize did. Tokens are KV positions: the KV
// budget that admission checks (a request reserves min(prompt+max_tokens,
// context) positions), backed by ceil(tokens / context) slots of one
// context each.
type ResizeResult struct {
	Op                                        uint64 // the resize's operation identity
	FromTokens, RequestedTokens, ActualTokens int
	FromSlots, Slots                          int
	// BytesBefore and BytesAfter are the arena's capacity: tokens x the KV
	// bytes of one position. DroppedBytes are the caches of removed slots.
	BytesBefore, BytesAfter, DroppedBytes int64
	RSSBefore, RSSAfter                   int64 // resident set size (0 where unknown)
	// Accepted is when the actor accepted the resize (its barrier
	// interval and the pause of admission began), Start when the
	// reallocation began (the batch drained), Duration the reallocation
	// with the return of memory to the operating system.
	Accepted, Start time.Time
	Duration        time.Duration
}

// Direction is grow, shrink or none, by the change of the token budget.
func (r ResizeResult) Direction() string {
	switch {
	case r.ActualTokens > r.FromTokens:
		return ResizeGrow
	case r.ActualTokens < r.FromTokens:
		return ResizeShrink
	}
	return ResizeNone
}

// Drained is how long the resize waited for the active requests to
// finish, from acceptance to the reallocation.
func (r ResizeResult) Drained() time.Duration { return timing.Elapsed(r.Accepted, r.Start) }

// KVMaxTokens is the largest KV budget a resize may ask for:
// Config.KVMaxTokens, or by default the tokens whose KV caches fit in half
// of the physical memory (never below the start-up budget). It is 0 when
// the backend cannot resize.
func (e *Engine) KVMaxTokens() int { return e.kvMax }

// ResizeKV changes the KV arena to tokens positions through the actor
// barrier (docs/maintenance.md section 6): admission pauses, the active requests
// drain, then the slot table is reallocated to ceil(tokens / context)
// slots, the caches of removed slots are dropped and the Go heap is
// returned to the operating system (debug.FreeOSMemory). Admission resumes
// with the new budget and batch limit at once. Requests whose wait for
// admission overlapped the barrier are charged resize.
//
// tokens must be at least one context and at most KVMaxTokens
// (ErrInvalidKVSize); the backend must be a KVResizer
// (ErrResizeUnsupported). reason is the operation's: ReasonMaintenance (an
// operator), ReasonAutomatic (the memory policy) or ReasonTraining.
func (e *Engine) ResizeKV(ctx context.Context, tokens int, reason string) (ResizeResult, error) {
	if e.kvMax == 0 {
		return ResizeResult{}, ErrResizeUnsupported
	}
	if err := e.checkKVSize(tokens); err != nil {
		return ResizeResult{}, err
	}
	m := &kvResize{tokens: tokens}
	err := e.mutate(ctx, m, reason, func(op *Operation) {
		op.Resize.RequestedTokens = tokens
		m.res.Op = op.ID
	})
	if err != nil {
		return ResizeResult{}, err
	}
	return m.res, nil
}

// ReasonTraining is the reason of a resize that makes room for a training
// job (the KV arena shrinks before it starts).
const ReasonTraining = "training_memory_preparation"

// CheckKVSize reports why tokens is not a valid size for ResizeKV
// (ErrInvalidKVSize naming the bound, ErrResizeUnsupported), or nil.
func (e *Engine) CheckKVSize(tokens int) error {
	if e.kvMax == 0 {
		return ErrResizeUnsupported
	}
	return e.checkKVSize(tokens)
}

// checkKVSize reports why tokens is not a valid KV budget.
func (e *Engine) checkKVSize(tokens int) error {
	switch {
	case tokens < e.seqLen:
		return fmt.Errorf("%w: %d tokens is below one context (%d tokens)", ErrInvalidKVSize, tokens, e.seqLen)
	case tokens > e.kvMax:
		return fmt.Errorf("%w: %d tokens exceeds the bound of %d tokens (kv_max_tokens)", ErrInvalidKVSize, tokens, e.kvMax)
	}
	return nil
}

// kvResize is the resize's barrier mutation. The actor runs it through
// applyActor (it changes the actor's slots and budget), never Apply.
type kvResize struct {
	tokens int
	res    ResizeResult
}

// Phase implements Mutation.
func (m *kvResize) Phase() timing.BackendPhase { return PhaseResize }

// Apply implements Mutation; the actor calls applyActor instead.
func (m *kvResize) Apply(Backend) error {
	return errors.New("engine: a KV resize runs only through Engine.ResizeKV")
}

// applyActor reallocates the arena, on the actor goroutine with no request
// holding a slot and ownership held exclusively.
func (m *kvResize) applyActor(a *actor, op *Operation) error {
	e := a.e
	rz := e.backend.(KVResizer) // ResizeKV checked
	per := rz.KVBytesPerPos()
	r := &m.res
	r.Accepted = a.mutGuard.Started()
	r.Start = a.now()
	r.RSSBefore = ResidentBytes()
	r.FromTokens, r.FromSlots = a.kvBudget, len(a.slotBuf)
	r.RequestedTokens = m.tokens
	r.Slots = (m.tokens + e.seqLen - 1) / e.seqLen
	r.DroppedBytes = rz.ResizeSlots(r.Slots)
	r.ActualTokens = m.tokens
	a.setCapacity(r.Slots, m.tokens)
	r.DroppedBytes += a.fitPrefix(PrefixEvictResize)
	debug.FreeOSMemory()
	r.RSSAfter = ResidentBytes()
	r.BytesBefore, r.BytesAfter = int64(r.FromTokens)*per, int64(r.ActualTokens)*per
	r.Duration = timing.Elapsed(r.Start, a.now())
	op.Resize = timing.ResizeDetail{FromTokens: r.FromTokens, RequestedTokens: r.RequestedTokens, ActualTokens: r.ActualTokens,
		FromSlots: r.FromSlots, Slots: r.Slots, BytesBefore: r.BytesBefore, BytesAfter: r.BytesAfter,
		DroppedBytes: r.DroppedBytes, RSSBefore: r.RSSBefore, RSSAfter: r.RSSAfter, Accepted: r.Accepted}
	return nil
}

// setCapacity makes the actor hold slots slots (all free: no request holds
// one at the barrier) and a KV budget of tokens. The batch limit follows
// the slots unless the configuration set a lower one.
func (a *actor) setCapacity(slots, tokens int) {
	e := a.e
	a.free = a.free[:0]
	for s := slots - 1; s >= 0; s-- {
		a.free = append(a.free, s)
	}
	buf := make([][]float32, slots)
	copy(buf, a.slotBuf)
	for i := range buf {
		if buf[i] == nil {
			buf[i] = make([]float32, e.vocab)
		}
	}
	a.slotBuf = buf
	a.kvBudget = tokens
	a.maxBatch = slots
	if e.batchLimit > 0 {
		a.maxBatch = min(e.batchLimit, slots)
	}
	a.snap.KVBudget = tokens
	a.snap.KVSlots = slots
	a.snap.BatchLimit = a.maxBatch
}

// kvMaxTokens is the resize bound of an engine over b (see KVMaxTokens).
func kvMaxTokens(b Backend, c Config) int {
	rz, ok := b.(KVResizer)
	if !ok || rz.KVBytesPerPos() <= 0 {
		return 0
	}
	if c.KVMaxTokens > 0 {
		return c.KVMaxTokens
	}
	mem := physicalBytes()
	if mem <= 0 {
		return c.KVBudget
	}
	return max(int(mem/2/rz.KVBytesPerPos()), c.KVBudget)
}
