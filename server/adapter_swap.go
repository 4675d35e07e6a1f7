package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/server/wire"
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
func (s *Server) running() *lora.Adapter {
	if e, ok := s.gen.(adapterEngine); ok {
		a, _ := e.LoadedAdapter().(*lora.Adapter)
		return a
	}
	return nil
}

// activate makes adapter name ("": the base model) the server default
// through the engine's barrier, the weights read from disk before it;
// reason is the operation's ("load", "unload": an operator).
func (s *Server) activate(ctx context.Context, name, reason string) error {
	e, ok := s.gen.(adapterEngine)
	if !ok || !e.AdaptersEnabled() {
		return errAdaptersOff
	}
	err := s.adapters.Activate(ctx, e, name, reason)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "adapter_swap_timeout",
			Message: "the adapter swap did not run in time (the active batch did not drain)", RetryAfter: s.cfg.RetryAfter, Err: err}
	}
	return about("name", err)
}

// errAdaptersOff answers adapter routes on a server whose engine takes no
// adapters.
var errAdaptersOff = &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "adapters_unavailable",
	Message: "this server runs no adapters"}
