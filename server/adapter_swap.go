package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry"
)

// baseAdapter names the base model wherever an adapter name or revision
// is reported (adapter_used, the revision header, /health's adapter).
const baseAdapter = "base"

// revisionHeader carries, on every chat and completion response, the
// revision (sha256) of the adapter the request ran with, or "base".
const revisionHeader = "x-kiln-loaded-adapter-revision"

// swapTimeout bounds an operator's load or unload: the batch's drain and
// the swap.
const swapTimeout = 60 * time.Second

// Swapper is the engine's adapter swapper, bound to the Server that New
// builds with it (Deps.Swapper). The engine is built before the server:
// pass sw.Swap to engine.WithAdapterSwapper, then sw in Deps. Every swap
// it builds is traced (kiln.adapter_swap), logged, and moves
// kiln_adapter_active and kiln_adapter_revision.
type Swapper struct{ s atomic.Pointer[Server] }

// Swap implements engine.AdapterSwapper.
func (w *Swapper) Swap(to engine.Adapter, reason string) engine.Mutation {
	a, ok := to.(*adapter)
	s := w.s.Load()
	switch {
	case s == nil:
		return &swapOp{err: errors.New("server: the adapter swapper is not bound to a server")}
	case to != nil && !ok:
		return &swapOp{s: s, err: fmt.Errorf("server: %T is not a server adapter", to)}
	}
	return &swapOp{s: s, to: a, reason: reason, queued: s.clock.Now()}
}

// adapterSetter is the backend a swap changes (*llama.State).
type adapterSetter interface {
	SetAdapter(a *llama.Adapter)
}

// adapterEngine is what the adapter routes need of the engine.
type adapterEngine interface {
	SwapAdapter(ctx context.Context, to engine.Adapter, reason string) error
}

// SwapAdapter implements adapterEngine.
func (g engineGenerator) SwapAdapter(ctx context.Context, to engine.Adapter, reason string) error {
	return g.e.SwapAdapter(ctx, to, reason)
}

// swapOp is one adapter swap at the actor barrier.
type swapOp struct {
	s      *Server
	to     *adapter // nil: the base model
	reason string
	queued time.Time
	err    error // set: the swap fails (unbound swapper, foreign adapter)
}

// Phase implements engine.Mutation.
func (o *swapOp) Phase() timing.Slot { return engine.PhaseAdapter }

// Apply implements engine.Mutation: it switches the weights, and traces
// the swap as a kiln.adapter_swap root span from its queueing (the drain
// is part of it) to the switch's end, registered so that the stall spans
// and chat spans it explains link to it; it logs it and moves
// kiln_adapter_active and kiln_adapter_revision.
func (o *swapOp) Apply(b engine.Backend) error {
	if o.s == nil {
		return o.err
	}
	s := o.s
	from := s.running.Load()
	_, span := s.tel.StartMaintenanceSpanAt(context.Background(), telemetry.SpanAdapterSwap, o.queued,
		attribute.String(telemetry.AttrMaintenanceReason, o.reason),
		attribute.String(telemetry.AttrAdapterFrom, adapterName(from)),
		attribute.String(telemetry.AttrAdapterTo, adapterName(o.to)),
		attribute.String(telemetry.AttrAdapterRevision, adapterRevision(o.to)))
	defer span.End()
	start := s.clock.Now()
	st, ok := b.(adapterSetter)
	err := o.err
	if err == nil && !ok {
		err = fmt.Errorf("server: the engine's backend %T takes no adapters", b)
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		s.log.Error().Err(err).Str("reason", o.reason).Str("from", adapterName(from)).Str("to", adapterName(o.to)).Msg("adapter swap failed")
		return err
	}
	var w *llama.Adapter
	if o.to != nil {
		w = o.to.w
	}
	st.SetAdapter(w)
	end := s.clock.Now()
	s.running.Store(o.to)
	s.tel.SetActiveAdapter(o.to != nil, adapterRevision(o.to))
	op := s.tel.BeginMaintenance(telemetry.LinkKindAdapterSwap, o.reason, span.SpanContext(), o.queued)
	op.End(start, end)
	op.Describe("ok", adapterName(from)+" -> "+adapterName(o.to))
	waitMs, applyMs := timing.Ms(timing.Elapsed(o.queued, start)), timing.Ms(timing.Elapsed(start, end))
	span.SetAttributes(attribute.Float64(telemetry.AttrAdapterWaitMs, waitMs), attribute.Float64(telemetry.AttrAdapterApplyMs, applyMs))
	s.log.Info().Str("reason", o.reason).Str("from", adapterName(from)).Str("to", adapterName(o.to)).
		Str("revision", adapterRevision(o.to)).Float64("wait_ms", waitMs).Float64("apply_ms", applyMs).
		Str("trace_id", span.SpanContext().TraceID().String()).Msg("adapter swap")
	return nil
}

// adapterName is a's name, or "base".
func adapterName(a *adapter) string {
	if a == nil {
		return baseAdapter
	}
	return a.name
}

// adapterRevision is a's sha256, or "base".
func adapterRevision(a *adapter) string {
	if a == nil || a.w == nil {
		return baseAdapter
	}
	return a.w.Info.SHA256
}

// swapAdapter loads adapter name (from disk, before the barrier) and
// swaps it in through the actor barrier; it becomes the server default.
// reason is the span's and the log's ("load": an operator; training's
// auto_load calls it too).
func (s *Server) swapAdapter(ctx context.Context, name, reason string) error {
	a, err := s.adapters.load("name", name)
	if err != nil {
		return err
	}
	if err := s.swapTo(ctx, a, reason); err != nil {
		return err
	}
	s.adapters.setDefault(a)
	return nil
}

// unloadAdapter swaps the base model in; it becomes the server default.
func (s *Server) unloadAdapter(ctx context.Context, reason string) error {
	if err := s.swapTo(ctx, nil, reason); err != nil {
		return err
	}
	s.adapters.setDefault(nil)
	return nil
}

// swapTo runs one swap through the engine's barrier.
func (s *Server) swapTo(ctx context.Context, a *adapter, reason string) error {
	e, ok := s.gen.(adapterEngine)
	if !ok || s.swapper == nil {
		return errAdaptersOff
	}
	var to engine.Adapter
	if a != nil {
		to = a
	}
	err := e.SwapAdapter(ctx, to, reason)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrNoAdapters):
		return errAdaptersOff
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "adapter_swap_timeout",
			Message: "the adapter swap did not run in time (the active batch did not drain)", RetryAfter: s.cfg.RetryAfter, Err: err}
	}
	return fmt.Errorf("adapter swap to %s: %w", adapterName(a), err)
}

// errAdaptersOff answers adapter routes on a server built without a
// Swapper.
var errAdaptersOff = &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "adapters_unavailable",
	Message: "this server runs no adapters"}
