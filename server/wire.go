package server

import (
	"fmt"
	"net/http"

	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// The wire formats of a generation. Chat completions, legacy completions,
// Responses (responses.go) and Anthropic Messages (anthropic.go) decode
// into one internal request (chatRequest) and run the same exchange: the
// same admission, engine, token loop, telemetry and performance object.
// Only what reaches the client differs, and a wire renders it: the records
// of a stream and the whole body of a response that is not streamed.

// api names the wire format a request came in. It is a closed set.
type api uint8

const (
	apiChat api = iota
	apiCompletions
	apiResponses
	apiMessages
)

// Where the fields the shared path checks (the prompt, a document's
// schema, a tool's schema) lie in each API's body, for the errors that
// name them: the prompt encoding's, the context check's and the grammar
// compile's.
var (
	promptParams = [...]string{apiChat: "messages", apiCompletions: "prompt", apiResponses: "input", apiMessages: "messages"}
	formatParams = [...]string{apiChat: "response_format.json_schema.schema", apiCompletions: "response_format.json_schema.schema",
		apiResponses: "text.format.schema", apiMessages: "response_format.json_schema.schema"}
	toolSchemaParams = [...]string{apiChat: ".function.parameters", apiCompletions: ".function.parameters",
		apiResponses: ".parameters", apiMessages: ".input_schema"}
)

// promptParam names the request's prompt in its API.
func (req *chatRequest) promptParam() string { return promptParams[req.api] }

// apiNames are the APIs' names on the chat span (kiln.request.api).
var apiNames = [...]string{apiChat: telemetry.APIChatCompletions, apiCompletions: telemetry.APICompletions,
	apiResponses: telemetry.APIResponses, apiMessages: telemetry.APIMessages}

// wire renders one response of a wire format. Only the handler goroutine
// calls it. The exchanges are the response's choices (only chat and
// legacy completions have more than one).
type wire interface {
	// open writes the records a stream starts with, once its headers are
	// written.
	open(x *exchange)
	// piece writes what one token (lp: its log probability, when asked) or
	// the held-back tail (lp nil) added to a streamed choice; pc may be
	// empty.
	piece(x *exchange, pc *piece, lp *tokenLogprob)
	// timing writes a token's kiln.token_timing event.
	timing(x *exchange, ev *latency.TokenEvent)
	// close writes the end of a stream: each choice's finish and, where the
	// format has one, its terminal performance object.
	close(xs []*exchange)
	// whole writes the response of a request that is not streamed.
	whole(xs []*exchange) error
	// cut ends a stream the shutdown grace cut: the client sees why it
	// ended rather than a bare EOF.
	cut(x *exchange)
}

// newWire is the wire of req's format.
func newWire(req *chatRequest) wire {
	switch req.api {
	case apiResponses:
		return &responsesWire{}
	case apiMessages:
		return &messagesWire{}
	}
	return openaiWire{}
}

// openaiWire is the OpenAI format of chat and legacy completions
// (openai.go, openai_completions.go).
type openaiWire struct{}

func (openaiWire) open(*exchange) {}

func (openaiWire) piece(x *exchange, pc *piece, lp *tokenLogprob) {
	if x.req.Legacy {
		x.write(func(b []byte) []byte { return x.appendTextChunk(b, pc.content, lp) })
		return
	}
	x.write(func(b []byte) []byte { return x.appendPieceChunk(b, pc, lp) })
}

// timing writes the event as its own data line, right after the token's
// chunk: the events pair with the chunks one to one.
func (openaiWire) timing(x *exchange, ev *latency.TokenEvent) { x.write(ev.AppendJSON) }

func (openaiWire) close(xs []*exchange) { endStream(xs) }

func (openaiWire) whole(xs []*exchange) error { return writeCompletion(xs) }

func (openaiWire) cut(x *exchange) {
	x.write(func(b []byte) []byte { return appendErrorObject(b, errCut) })
	x.done()
}

// writeWhole writes the body of a response that was not streamed.
func (p *reply) writeWhole(b []byte) error {
	p.w.Header().Set("Content-Type", "application/json")
	p.w.WriteHeader(http.StatusOK)
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
