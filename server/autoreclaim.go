package server

import (
	"context"
	"time"

	"github.com/kiln-ai/kiln/engine"
)

// Automatic memory reclaim (--memory-reclaim automatic): the server trims
// by itself once the engine has been idle for AutoReclaimIdle after some
// work, at most once per idle period.
const (
	AutoReclaimIdle = 30 * time.Second
	autoReclaimPoll = 5 * time.Second
)

// StartAutoReclaim runs the automatic trims and the automatic KV resizes
// (autoresize.go) until ctx ends when the configuration asks for them
// (otherwise it does nothing), and returns a
// channel closed once the loop has exited: wait for it before shutting the
// engine down.
func (s *Server) StartAutoReclaim(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if s.cfg.MemoryReclaim != ReclaimAutomatic {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		t := time.NewTicker(autoReclaimPoll)
		defer t.Stop()
		trig := idleTrigger{idle: AutoReclaimIdle}
		policy := s.autoResizePolicy()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s.autoResize(ctx, &policy, s.gen.Snapshot())
			if trig.observe(s.clock.Now(), s.gen.Snapshot()) {
				tctx, cancel := context.WithTimeout(ctx, trimTimeout)
				_, _ = s.trim(tctx, engine.ReasonAutomatic) // logged by telemetry
				cancel()
			}
		}
	}()
	return done
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
func (t *idleTrigger) observe(now time.Time, s engine.Snapshot) bool {
	busy := s.Active > 0 || s.QueueDepth > 0 || s.Draining > 0
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
