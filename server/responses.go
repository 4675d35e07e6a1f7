package server

import (
	"net/http"

	"github.com/kiln-ai/kiln/server/responses"
	"github.com/kiln-ai/kiln/server/wire"
)

// POST /v1/responses, OpenAI's Responses API (server/responses decodes
// its body and renders its response), and GET /v1/responses/{id}, a
// stored response.

const responsesPath = "/v1/responses"

// responses serves POST /v1/responses.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) error {
	return s.generate(w, r, func(data []byte) (*wire.Request, wire.Wire, error) {
		return responses.Parse(data, s.stored)
	})
}

// getResponse serves GET /v1/responses/{id}: a stored response's object.
func (s *Server) getResponse(w http.ResponseWriter, r *http.Request) error {
	body, ok := s.stored.Body(r.PathValue("id"))
	if !ok {
		return s.stored.NotFound(r.PathValue("id"), "", "not_found")
	}
	return writeJSON(w, http.StatusOK, body)
}
