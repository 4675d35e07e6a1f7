package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/server/wire"
)

// resizeTimeout bounds a resize's wait for the actor: the active requests
// drain before the arena is reallocated, so this is at most the longest
// generation in flight.
const resizeTimeout = 5 * time.Minute

// kvResizer is what the resize route needs of the engine.
type kvResizer interface {
	ResizeKV(ctx context.Context, tokens int, reason string) (engine.ResizeResult, error)
	CheckKVSize(tokens int) error
	KVMaxTokens() int
}

// CheckKVSize implements kvResizer.
func (g engineGenerator) CheckKVSize(tokens int) error { return g.e.CheckKVSize(tokens) }

// ResizeKV implements kvResizer.
func (g engineGenerator) ResizeKV(ctx context.Context, tokens int, reason string) (engine.ResizeResult, error) {
	return g.e.ResizeKV(ctx, tokens, reason)
}

// KVMaxTokens implements kvResizer.
func (g engineGenerator) KVMaxTokens() int { return g.e.KVMaxTokens() }

// KVResizeReply is what one KV resize did: the reply of POST
// /v1/maintenance/kv/resize and the result of ResizeKV. Tokens are KV
// positions, the budget admission checks, backed by ceil(tokens /
// context) slots; bytes are the arena's capacity (tokens x the KV bytes
// of one position).
type KVResizeReply struct {
	Object          string  `json:"object"` // "kiln.maintenance.kv_resize"
	Reason          string  `json:"reason"`
	Direction       string  `json:"direction"` // grow, shrink, none
	FromTokens      int     `json:"from_tokens"`
	RequestedTokens int     `json:"requested_tokens"`
	ActualTokens    int     `json:"actual_tokens"`
	FromSlots       int     `json:"from_slots"`
	Slots           int     `json:"slots"`
	BytesBefore     int64   `json:"bytes_before"`
	BytesAfter      int64   `json:"bytes_after"`
	DroppedBytes    int64   `json:"dropped_bytes"`
	RSSBeforeBytes  int64   `json:"rss_before_bytes"`
	RSSAfterBytes   int64   `json:"rss_after_bytes"`
	DurationMs      float64 `json:"duration_ms"` // the reallocation, memory returned included
	DrainMs         float64 `json:"drain_ms"`    // acceptance (admission paused) to the reallocation
	WaitMs          float64 `json:"wait_ms"`     // the call to the reallocation
}

// maintenanceKVResize serves POST /v1/maintenance/kv/resize {"tokens": N}:
// one resize for reason "maintenance". Bad input (a body that is not
// exactly {"tokens": integer}, a size below one context or beyond the
// bound) is a 400 and changes nothing.
func (s *Server) maintenanceKVResize(w http.ResponseWriter, r *http.Request) error {
	fields, err := s.readObject(w, r)
	if err != nil {
		return err
	}
	tokens, err := kvResizeTokens(fields)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), resizeTimeout)
	defer cancel()
	reply, err := s.ResizeKV(ctx, clampInt(tokens), engine.ReasonMaintenance)
	if err != nil {
		return err
	}
	return marshalJSON(w, http.StatusOK, reply)
}

// kvResizeTokens reads the resize body {"tokens": N}: exactly that one
// field, an integer; anything else is a 400 naming the field.
func kvResizeTokens(fields map[string]json.RawMessage) (int64, error) {
	for k := range fields {
		if k != "tokens" {
			return 0, wire.Invalid(k, "unknown_parameter", "unknown parameter '%s': the body is {\"tokens\": N}", k)
		}
	}
	raw, ok := fields["tokens"]
	if !ok || wire.IsNull(raw) {
		return 0, wire.Invalid("tokens", "missing_required_parameter", "missing required parameter: 'tokens'")
	}
	var tokens int64
	if err := json.Unmarshal(raw, &tokens); err != nil {
		return 0, wire.WrongType("tokens", "an integer", raw)
	}
	return tokens, nil
}

// clampInt converts n to an int, saturating (a size beyond int is beyond
// every bound anyway).
func clampInt(n int64) int {
	return int(max(min(n, int64(1<<31)), -1<<31))
}

// PrepareTrainingMemory makes room for a training job before it starts
// (docs/maintenance.md section 6, reason training_memory_preparation): it
// shrinks the KV arena to tokens positions (at least one context), so the
// memory the job needs is taken from inference's reserve. A tokens at or
// above the current budget changes nothing (direction none is still
// logged and counted). The training worker calls it; its errors are those
// of ResizeKV.
func (s *Server) PrepareTrainingMemory(ctx context.Context, tokens int) (KVResizeReply, error) {
	if cur := s.gen.Snapshot().KVBudget; tokens > cur {
		tokens = cur
	}
	return s.ResizeKV(ctx, tokens, engine.ReasonTraining)
}

// ResizeKV resizes the engine's KV arena to tokens positions for reason
// (engine.ReasonMaintenance, ReasonAutomatic or ReasonTraining) through the
// actor barrier. The engine makes it an operation, which telemetry traces
// (the chat spans of the requests it delayed link to it), lists, logs and
// counts in kiln_kv_resizes_total{reason,direction}. An invalid size is a
// 400 invalid_kv_size naming the bound, refused before any of that.
func (s *Server) ResizeKV(ctx context.Context, tokens int, reason string) (KVResizeReply, error) {
	rz, ok := s.gen.(kvResizer)
	if !ok || rz.KVMaxTokens() == 0 {
		return KVResizeReply{}, &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "kv_resize_unavailable",
			Message: "this engine cannot resize its KV arena"}
	}
	if err := rz.CheckKVSize(tokens); err != nil {
		s.log.Warn().Err(err).Str("reason", reason).Int("requested_tokens", tokens).Msg("kv resize refused")
		return KVResizeReply{}, resizeError(err, rz.KVMaxTokens())
	}
	called := s.clock.Now()
	res, err := rz.ResizeKV(ctx, tokens, reason)
	if err != nil {
		return KVResizeReply{}, resizeError(err, rz.KVMaxTokens())
	}
	return KVResizeReply{
		Object: "kiln.maintenance.kv_resize", Reason: reason, Direction: res.Direction(),
		FromTokens: res.FromTokens, RequestedTokens: res.RequestedTokens, ActualTokens: res.ActualTokens,
		FromSlots: res.FromSlots, Slots: res.Slots,
		BytesBefore: res.BytesBefore, BytesAfter: res.BytesAfter, DroppedBytes: res.DroppedBytes,
		RSSBeforeBytes: res.RSSBefore, RSSAfterBytes: res.RSSAfter,
		DurationMs: timing.Ms(res.Duration), DrainMs: timing.Ms(res.Drained()), WaitMs: timing.Ms(timing.Elapsed(called, res.Start)),
	}, nil
}

// resizeError maps the engine's resize errors to the client's.
func resizeError(err error, bound int) *wire.Error {
	switch {
	case errors.Is(err, engine.ErrInvalidKVSize):
		return &wire.Error{Status: http.StatusBadRequest, Type: wire.TypeInvalidRequest, Param: "tokens", Code: "invalid_kv_size",
			Message: fmt.Sprintf("%s; valid sizes are one context up to %d tokens (--kv-max-tokens, default half of physical memory)",
				strings.TrimPrefix(err.Error(), "engine: "), bound), Err: err}
	case errors.Is(err, engine.ErrStopped), errors.Is(err, engine.ErrRestartRequired):
		return &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "restart_required",
			Message: "the engine is not healthy; a restart is required", Err: err}
	}
	return &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "kv_resize_timeout",
		Message: "the resize did not run in time (the active requests did not drain)", Err: err}
}
