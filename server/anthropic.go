package server

import (
	"net/http"

	"github.com/kiln-ai/kiln/server/anthropic"
)

// POST /v1/messages, Anthropic's Messages API, and its count_tokens
// (server/anthropic decodes their bodies, renders the message and
// shapes the errors of every route under /v1/messages).

// anthropicMessages serves POST /v1/messages.
func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) error {
	return s.generate(w, r, format(anthropic.Parse, anthropic.NewWire))
}

// countTokens serves POST /v1/messages/count_tokens: the prompt's length
// under the chat template, tools included, as the generation would encode
// it.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) error {
	if err := s.inferenceAllowed(); err != nil {
		return err
	}
	data, err := requestBody(r)
	if err != nil {
		return err
	}
	req, err := anthropic.ParseCountTokens(data)
	if err != nil {
		return err
	}
	if err := s.checkModel(req.Model); err != nil {
		return err
	}
	ids, err := s.promptIDs(req)
	if err != nil {
		return err
	}
	return marshalJSON(w, http.StatusOK, map[string]int{"input_tokens": len(ids)})
}
