package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/server/wire"
)

// ReclaimMode says whether trims (memory reclaim, docs/maintenance.md section 7)
// run: --memory-reclaim / KILN_MEMORY_RECLAIM.
type ReclaimMode string

// Memory reclaim modes.
const (
	// ReclaimOff (default): POST /v1/maintenance/trim answers 409
	// memory_reclaim_disabled.
	ReclaimOff ReclaimMode = "off"
	// ReclaimOnDemand: trims run when an operator asks.
	ReclaimOnDemand ReclaimMode = "on-demand"
	// ReclaimAutomatic: as on-demand, and the server trims by itself once
	// the engine has been idle for engine.AutoReclaimIdle.
	ReclaimAutomatic ReclaimMode = "automatic"
)

// String implements flag.Value.
func (m *ReclaimMode) String() string { return string(*m) }

// Set implements flag.Value.
func (m *ReclaimMode) Set(s string) error {
	switch v := ReclaimMode(s); v {
	case ReclaimOff, ReclaimOnDemand, ReclaimAutomatic:
		*m = v
		return nil
	}
	return fmt.Errorf("memory_reclaim: %q is not off, on-demand or automatic", s)
}

// validateMaintenance checks the profile and reclaim fields.
func (c Config) validateMaintenance() error {
	if _, err := ParseServingProfile(string(c.ServingProfile)); err != nil {
		return err
	}
	switch c.ProfileSource {
	case SourceDefault, SourceFlag, SourceEnv:
	default:
		return fmt.Errorf("serving_profile: source %q is not default, flag or env", c.ProfileSource)
	}
	m := c.MemoryReclaim
	return m.Set(string(m))
}

// trimTimeout bounds an operator's trim: the wait for the actor to reach a
// point between two forward invocations, and the trim itself.
const trimTimeout = 30 * time.Second

// trimmer is what the trim route needs of the engine.
type trimmer interface {
	Trim(ctx context.Context, reason string) (engine.TrimResult, error)
}

// Trim implements trimmer.
func (g engineGenerator) Trim(ctx context.Context, reason string) (engine.TrimResult, error) {
	return g.e.Trim(ctx, reason)
}

// trimBody is the reply of POST /v1/maintenance/trim.
type trimBody struct {
	Object            string  `json:"object"`  // "kiln.maintenance.trim"
	Outcome           string  `json:"outcome"` // "reclaimed" or "zero_yield"
	ReclaimedBytes    int64   `json:"reclaimed_bytes"`
	BackendBytes      int64   `json:"backend_bytes"`
	PrefixBlocks      int     `json:"prefix_cache_blocks_dropped"`
	HeapReleasedBytes int64   `json:"heap_released_bytes"`
	RSSBeforeBytes    int64   `json:"rss_before_bytes"`
	RSSAfterBytes     int64   `json:"rss_after_bytes"`
	DurationMs        float64 `json:"duration_ms"`
	DeferredMs        float64 `json:"deferred_ms"`
}

// maintenanceTrim serves POST /v1/maintenance/trim: one trim now (between
// two forward invocations of the engine, under exclusive ownership). 409
// memory_reclaim_disabled while --memory-reclaim is off: the route exists
// but the operator's configuration forbids it (not a transient 503).
func (s *Server) maintenanceTrim(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.MemoryReclaim == ReclaimOff {
		return &wire.Error{Status: http.StatusConflict, Type: wire.TypeInvalidRequest, Code: "memory_reclaim_disabled",
			Message: "memory reclaim is off; start kiln with --memory-reclaim on-demand (or automatic) to allow trims"}
	}
	ctx, cancel := context.WithTimeout(r.Context(), trimTimeout)
	defer cancel()
	body, err := s.trim(ctx, engine.ReasonMaintenance)
	if err != nil {
		return err
	}
	return marshalJSON(w, http.StatusOK, body)
}

// trim runs one trim for reason (engine.ReasonMaintenance: an operator;
// engine.ReasonAutomatic: the idle loop). The engine makes it an
// operation, which telemetry traces, lists, logs and counts.
func (s *Server) trim(ctx context.Context, reason string) (trimBody, error) {
	t, ok := s.gen.(trimmer)
	if !ok {
		return trimBody{}, &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "trim_unavailable",
			Message: "this engine cannot trim"}
	}
	res, err := t.Trim(ctx, reason)
	if err != nil {
		if errors.Is(err, engine.ErrRestartRequired) {
			return trimBody{}, err // the domain table's 503 restart_required
		}
		return trimBody{}, &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "trim_timeout",
			Message: "the trim did not run in time", RetryAfter: s.cfg.RetryAfter, Err: err}
	}
	b := trimBody{
		Object: "kiln.maintenance.trim", Outcome: engine.OutcomeZeroYield,
		ReclaimedBytes: res.Reclaimed(), BackendBytes: res.BackendBytes, PrefixBlocks: res.PrefixBlocks, HeapReleasedBytes: res.HeapReleased,
		RSSBeforeBytes: res.RSSBefore, RSSAfterBytes: res.RSSAfter,
		DurationMs: timing.Ms(res.Duration), DeferredMs: timing.Ms(res.Deferred),
	}
	if b.ReclaimedBytes > 0 {
		b.Outcome = engine.OutcomeReclaimed
	}
	return b, nil
}
