package server

import (
	"fmt"
	"net/http"

	"github.com/kiln-ai/kiln/telemetry"
)

// The wire formats of a generation. Chat completions, legacy completions,
// Responses and Anthropic Messages decode into one internal request
// (chatRequest) and run the same exchange: the same admission, engine,
// token loop, telemetry and performance object. Only what reaches the
// client differs, and a wire renders it (choice.go): the records of a
// stream and the whole body of a response that is not streamed.

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
func promptParam(req *chatRequest) string { return promptParams[req.api] }

// apiNames are the APIs' names on the chat span (kiln.request.api).
var apiNames = [...]string{apiChat: telemetry.APIChatCompletions, apiCompletions: telemetry.APICompletions,
	apiResponses: telemetry.APIResponses, apiMessages: telemetry.APIMessages}

// completionID is the response id: chatcmpl-… for chat, cmpl-… for a
// legacy completion, resp_… for Responses, msg_… for Messages, as their
// APIs name them.
func completionID(req *chatRequest) string { return newID(idPrefixes[req.api]) }

var idPrefixes = [...]string{apiChat: "chatcmpl-", apiCompletions: "cmpl-", apiResponses: "resp_", apiMessages: "msg_"}

// writeWhole writes the body of a response that was not streamed.
func (p *reply) writeWhole(b []byte) error {
	p.w.Header().Set("Content-Type", "application/json")
	p.w.WriteHeader(http.StatusOK)
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
