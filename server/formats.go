package server

import (
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
)

// The wire formats of a generation. Chat completions, legacy completions,
// Responses and Anthropic Messages decode into one internal request
// (wire.Request) and run the same exchange: the same admission, engine,
// token loop, telemetry and performance object. Only what reaches the
// client differs, and the format's wire renders it (server/wire/choice.go):
// the records of a stream and the whole body of a response that is not
// streamed. These are the tables the shared path reads by format.

// Where the fields the shared path checks (the prompt, a document's
// schema, a tool's schema) lie in each API's body, for the errors that
// name them: the prompt encoding's, the context check's and the grammar
// compile's.
var (
	promptParams = [...]string{wire.APIChat: "messages", wire.APICompletions: "prompt", wire.APIResponses: "input", wire.APIMessages: "messages"}
	formatParams = [...]string{wire.APIChat: "response_format.json_schema.schema", wire.APICompletions: "response_format.json_schema.schema",
		wire.APIResponses: "text.format.schema", wire.APIMessages: "response_format.json_schema.schema"}
	toolSchemaParams = [...]string{wire.APIChat: ".function.parameters", wire.APICompletions: ".function.parameters",
		wire.APIResponses: ".parameters", wire.APIMessages: ".input_schema"}
)

// promptParam names the request's prompt in its API.
func promptParam(req *wire.Request) string { return promptParams[req.API] }

// apiNames are the APIs' names on the chat span (kiln.request.api).
var apiNames = [...]string{wire.APIChat: telemetry.APIChatCompletions, wire.APICompletions: telemetry.APICompletions,
	wire.APIResponses: telemetry.APIResponses, wire.APIMessages: telemetry.APIMessages}

// completionID is the response id: chatcmpl-… for chat, cmpl-… for a
// legacy completion, resp_… for Responses, msg_… for Messages, as their
// APIs name them.
func completionID(req *wire.Request) string { return wire.NewID(idPrefixes[req.API]) }

var idPrefixes = [...]string{wire.APIChat: "chatcmpl-", wire.APICompletions: "cmpl-", wire.APIResponses: "resp_", wire.APIMessages: "msg_"}
