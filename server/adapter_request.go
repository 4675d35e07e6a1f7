package server

import (
	"net/http"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/server/wire"
)

// requestAdapter resolves the adapter a request runs with, loading its
// weights from disk when they are not in memory yet (before any barrier):
// nil is the base model. Errors: 400 invalid_adapter_name, 404
// adapter_not_found, 400 adapter_layout_invalid, 503 adapters_unavailable
// when the request names an adapter on a server without them.
func (s *Server) requestAdapter(req *wire.Request) (*lora.Adapter, error) {
	if !req.AdapterGiven {
		return s.adapters.Default(), nil
	}
	if req.Adapter == "" {
		return nil, nil
	}
	if !s.adaptersOn() {
		return nil, errAdaptersOff
	}
	a, err := s.adapters.Load(req.Adapter)
	return a, about("adapter", err)
}

// engineAdapter is a as the engine compares it: a nil interface for the
// base model.
func engineAdapter(a *lora.Adapter) engine.Adapter {
	if a == nil {
		return nil
	}
	return a
}

// setRevisionHeader sets x-kiln-loaded-adapter-revision to a's revision.
func setRevisionHeader(w http.ResponseWriter, a *lora.Adapter) {
	w.Header().Set(revisionHeader, lora.Revision(a))
}
