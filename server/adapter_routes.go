package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/server/wire"
)

// adaptersBody is the reply of GET /v1/adapters and of the routes that
// change adapters (schemas/kiln-adapters-v1.schema.json).
type adaptersBody struct {
	Object string `json:"object"` // "kiln.adapters"
	// Active is the server default, what a request without an adapter
	// field runs with; null: the base model.
	Active *string `json:"active"`
	// Running is the adapter the engine runs with now (a request naming
	// another one swaps it); null: the base model.
	Running   *string      `json:"running"`
	Loaded    []string     `json:"loaded"` // adapters whose weights are in memory
	Available []lora.Entry `json:"available"`
}

// adapterNameBody is the body of POST /v1/adapters/load.
type adapterNameBody struct {
	Name *string `json:"name"`
}

// listAdapters serves GET /v1/adapters.
func (s *Server) listAdapters(w http.ResponseWriter, _ *http.Request) error {
	b, err := s.adaptersBody()
	if err != nil {
		return err
	}
	return marshalJSON(w, http.StatusOK, b)
}

func (s *Server) adaptersBody() (adaptersBody, error) {
	avail, err := s.adapters.Available()
	if err != nil {
		return adaptersBody{}, err
	}
	for i := range avail {
		if e := avail[i].Err; e != nil {
			why := problemOf(e)
			avail[i].Problem = &why
		}
	}
	return adaptersBody{Object: "kiln.adapters", Active: namePtr(s.adapters.Default()),
		Running: namePtr(s.running()), Loaded: s.adapters.LoadedNames(), Available: avail}, nil
}

// problemOf is why an adapter cannot load, as the domain table words a
// load's error reply (the sentinel's text left out), or the error itself
// for one outside the table (a file that cannot be read).
func problemOf(err error) string {
	if e := fromDomain(err, 0); e != nil {
		return e.Message
	}
	return strings.TrimPrefix(err.Error(), "llama: ")
}

// namePtr is a's name, nil for the base model.
func namePtr(a *lora.Adapter) *string {
	if a == nil {
		return nil
	}
	n := lora.Name(a)
	return &n
}

// loadAdapter serves POST /v1/adapters/load {"name"}: the adapter's
// weights are read from disk, then swapped in through the actor barrier;
// it becomes the server default.
func (s *Server) loadAdapter(w http.ResponseWriter, r *http.Request) error {
	var body adapterNameBody
	if err := decodeStrict(r, &body, false); err != nil {
		return err
	}
	if body.Name == nil {
		return wire.Invalid("name", "missing_field", "'name' is required: the adapter to load (GET /v1/adapters lists them)")
	}
	ctx, cancel := context.WithTimeout(r.Context(), swapTimeout)
	defer cancel()
	if err := about("name", lora.CheckName(*body.Name)); err != nil {
		return err // "" would name the base model to activate
	}
	if err := s.activate(ctx, *body.Name, "load"); err != nil {
		return err
	}
	return s.writeAdapters(w)
}

// unloadAdapterRoute serves POST /v1/adapters/unload: back to the base
// model, through the barrier; base becomes the server default. The body
// is empty or {}.
func (s *Server) unloadAdapterRoute(w http.ResponseWriter, r *http.Request) error {
	var body struct{}
	if err := decodeStrict(r, &body, true); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), swapTimeout)
	defer cancel()
	if err := s.activate(ctx, "", "unload"); err != nil {
		return err
	}
	return s.writeAdapters(w)
}

// deleteAdapter serves DELETE /v1/adapters/{name}: it deletes the
// adapter's files (409 adapter_active for the server default).
func (s *Server) deleteAdapter(w http.ResponseWriter, r *http.Request) error {
	if !s.adaptersOn() {
		return errAdaptersOff
	}
	if err := about("name", s.adapters.Remove(r.PathValue("name"))); err != nil {
		return err
	}
	return s.writeAdapters(w)
}

func (s *Server) writeAdapters(w http.ResponseWriter) error {
	b, err := s.adaptersBody()
	if err != nil {
		return err
	}
	return marshalJSON(w, http.StatusOK, b)
}
