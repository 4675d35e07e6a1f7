package engine

import (
	"context"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// The automatic memory policy (--memory-reclaim automatic): the engine
// trims by itself once it has been idle for AutoReclaimIdle after some
// work, at most once per idle period, and resizes its KV arena by the
// policy below, both checked at one poll.
const (
	AutoReclaimIdle = 30 * time.Second
	autoReclaimPoll = 5 * time.Second
	trimTimeout     = 30 * time.Second
	resizeTimeout   = 5 * time.Minute
)

// RunMemoryPolicy runs the automatic trims and KV resizes until ctx ends
// and returns a channel closed once the loop has exited: wait for it
// before shutting the engine down. Each trim and resize is an operation
// of reason ReasonAutomatic (traced, logged and counted like an
// operator's).
func (e *Engine) RunMemoryPolicy(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(autoReclaimPoll)
		defer t.Stop()
		trig := idleTrigger{idle: AutoReclaimIdle}
		policy := newResizePolicy(e.cfg.KVBudget, e.seqLen, e.kvMax)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if tokens, due := policy.observe(e.clock.Now(), e.Snapshot()); due {
				rctx, cancel := context.WithTimeout(ctx, resizeTimeout)
				_, _ = e.ResizeKV(rctx, tokens, ReasonAutomatic) // its record says how it went
				cancel()
			}
			if trig.observe(e.clock.Now(), e.Snapshot()) {
				tctx, cancel := context.WithTimeout(ctx, trimTimeout)
				_, _ = e.Trim(tctx, ReasonAutomatic)
				cancel()
			}
		}
	}()
	return done
}

// The automatic KV resize policy (reason automatic_memory_policy), on with
// --memory-reclaim automatic beside the idle trims and checked at the same
// poll:
//
//   - grow: when admissions waited for KV capacity (requests queued while
//     every slot is taken or less than one context of the budget is free)
//     at autoGrowPolls consecutive polls, the budget doubles, up to
//     autoGrowLimit times the start-up budget and never beyond
//     KVMaxTokens (by default the KV that fits in half of the physical
//     memory: what "memory allows" means here);
//   - shrink: once the engine has been quiet (nothing active, queued or
//     draining) for AutoResizeQuiet, a grown budget goes back to the
//     start-up one.
const (
	AutoResizeQuiet = time.Minute
	autoGrowPolls   = 2
	autoGrowLimit   = 4
)

// resizePolicy decides the automatic resizes from the engine's snapshots.
type resizePolicy struct {
	base, limit, seq int // start-up budget, the largest automatic one, the context
	waited           int // consecutive polls that saw admissions wait for KV
	quietSince       time.Time
}

// newResizePolicy is the policy of an engine that started with budget base
// tokens, a context of seq and a resize bound of kvMax (0: it cannot
// resize, and the policy never resizes).
func newResizePolicy(base, seq, kvMax int) resizePolicy {
	return resizePolicy{base: base, seq: seq, limit: min(kvMax, autoGrowLimit*base)}
}

// engineBusy reports whether the snapshot shows work: a request active,
// queued or draining. The resize and trim policies both wait for its end.
func engineBusy(s timing.EngineSnapshot) bool {
	return s.Active > 0 || s.QueueDepth > 0 || s.Draining > 0
}

// observe takes the engine's snapshot at now and returns the budget to
// resize to, if one is due.
func (p *resizePolicy) observe(now time.Time, s timing.EngineSnapshot) (int, bool) {
	if p.limit <= p.base {
		return 0, false
	}
	busy := engineBusy(s)
	if busy || p.quietSince.IsZero() {
		p.quietSince = now
	}
	kvFull := s.QueueDepth > 0 && (s.Active >= s.KVSlots || s.KVBudget-s.KVReserved < p.seq)
	if !kvFull {
		p.waited = 0
	} else if p.waited++; p.waited >= autoGrowPolls && s.KVBudget < p.limit {
		p.waited = 0
		return min(2*s.KVBudget, p.limit), true
	}
	if !busy && s.KVBudget > p.base && now.Sub(p.quietSince) >= AutoResizeQuiet {
		p.quietSince = now
		return p.base, true
	}
	return 0, false
}

// idleTrigger decides when an automatic trim is due: the engine generated
// tokens since the last trim, and has since been idle (nothing active,
// queued or draining, no token generated) for idle.
type idleTrigger struct {
	idle       time.Duration
	lastTokens uint64
	idleSince  time.Time
	dirty      bool // work happened since the last trim
}

// observe takes the engine's snapshot at now and reports whether to trim.
func (t *idleTrigger) observe(now time.Time, s timing.EngineSnapshot) bool {
	busy := engineBusy(s)
	if busy || s.TokensGenerated != t.lastTokens || t.idleSince.IsZero() {
		t.dirty = t.dirty || busy || s.TokensGenerated != t.lastTokens
		t.lastTokens = s.TokensGenerated
		t.idleSince = now
		return false
	}
	if !t.dirty || now.Sub(t.idleSince) < t.idle {
		return false
	}
	t.dirty = false
	return true
}
