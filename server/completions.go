package server

import (
	"fmt"
	"net/http"

	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/server/wire"
)

// completionsPath is OpenAI's legacy text completion endpoint.
const completionsPath = "/v1/completions"

// completions serves POST /v1/completions, OpenAI's legacy text
// completion: the prompt is raw text (no chat template), and the response
// is a text_completion (server/openai). Everything else, the
// engine, the token loop, include_performance and the error shapes, is
// chat's (generate).
func (s *Server) completions(w http.ResponseWriter, r *http.Request) error {
	return s.generate(w, r, format(openai.ParseCompletion, openai.NewWire))
}

// promptIDs tokenizes the request's prompt: the chat template over the
// messages, or a legacy completion's text as it is.
func (s *Server) promptIDs(req *wire.Request) ([]int, error) {
	if !req.Legacy {
		return s.encodePrompt(req)
	}
	ids := s.tok.WithBOS(s.tok.EncodeSpecial(req.Prompt))
	if len(ids) == 0 {
		return nil, wire.Invalid("prompt", "invalid_value", "the prompt produces no tokens")
	}
	return ids, nil
}

// contextExceeded is the 400 for a prompt that leaves no room to
// generate: it states both numbers, as OpenAI's message does.
func (s *Server) contextExceeded(req *wire.Request, promptLen int, cause error) *wire.Error {
	param := promptParam(req)
	ctxLen := s.model.Model.Config.SeqLen
	return &wire.Error{Status: http.StatusBadRequest, Type: wire.TypeInvalidRequest, Param: param, Code: "context_length_exceeded",
		Message: fmt.Sprintf("this model's maximum context length is %d tokens, but the prompt is %d tokens; at most %d prompt tokens leave room for one completion token",
			ctxLen, promptLen, ctxLen-1),
		Err: cause}
}
