package server

import (
	"context"
	"time"

	"github.com/kiln-ai/kiln/engine"
)

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

// observe takes the engine's snapshot at now and returns the budget to
// resize to, if one is due.
func (p *resizePolicy) observe(now time.Time, s engine.Snapshot) (int, bool) {
	if p.limit <= p.base {
		return 0, false
	}
	busy := s.Active > 0 || s.QueueDepth > 0 || s.Draining > 0
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

// autoResize runs one automatic resize when the policy asks for it.
func (s *Server) autoResize(ctx context.Context, p *resizePolicy, snap engine.Snapshot) {
	tokens, due := p.observe(s.clock.Now(), snap)
	if !due {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, resizeTimeout)
	defer cancel()
	_, _ = s.ResizeKV(rctx, tokens, engine.ReasonAutomatic) // logged by ResizeKV
}

// autoResizePolicy is the server's automatic resize policy.
func (s *Server) autoResizePolicy() resizePolicy {
	kvMax := 0
	if rz, ok := s.gen.(kvResizer); ok {
		kvMax = rz.KVMaxTokens()
	}
	return newResizePolicy(s.cfg.Engine.KVBudget, s.model.Model.Config.SeqLen, kvMax)
}
