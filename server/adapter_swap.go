package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
)

// baseAdapter names the base model wherever an adapter name or revision
// is reported (adapter_used, the revision header).
const baseAdapter = engine.BaseAdapter

// revisionHeader carries, on every chat and completion response, the
// revision (sha256) of the adapter the request ran with, or "base".
const revisionHeader = "x-kiln-loaded-adapter-revision"

// swapTimeout bounds an operator's load or unload: the batch's drain and
// the swap.
const swapTimeout = 60 * time.Second

// AdapterWeights implements engine.WeightedAdapter: the engine's own swap
// gives the backend these weights.
func (a *adapter) AdapterWeights() *llama.Adapter { return a.w }

// adapterEngine is what the adapter routes need of the engine.
type adapterEngine interface {
	SwapAdapter(ctx context.Context, to engine.Adapter, reason string) error
	AdaptersEnabled() bool
	LoadedAdapter() engine.Adapter
}

// SwapAdapter implements adapterEngine.
func (g engineGenerator) SwapAdapter(ctx context.Context, to engine.Adapter, reason string) error {
	return g.e.SwapAdapter(ctx, to, reason)
}

// AdaptersEnabled implements adapterEngine.
func (g engineGenerator) AdaptersEnabled() bool { return g.e.AdaptersEnabled() }

// LoadedAdapter implements adapterEngine.
func (g engineGenerator) LoadedAdapter() engine.Adapter { return g.e.LoadedAdapter() }

// adaptersOn reports whether requests may name adapters: the engine was
// built WithAdapters.
func (s *Server) adaptersOn() bool {
	e, ok := s.gen.(adapterEngine)
	return ok && e.AdaptersEnabled()
}

// running is the adapter the engine runs with now (nil: the base model).
func (s *Server) running() *adapter {
	if e, ok := s.gen.(adapterEngine); ok {
		a, _ := e.LoadedAdapter().(*adapter)
		return a
	}
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
// reason is the operation's ("load": an operator; training's auto_load
// calls it too).
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
	if !ok || !e.AdaptersEnabled() {
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

// errAdaptersOff answers adapter routes on a server whose engine takes no
// adapters.
var errAdaptersOff = &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "adapters_unavailable",
	Message: "this server runs no adapters"}
