// Package wire is what Kiln's wire formats share: the internal request
// every format's body decodes into (Request), the typed field readers and
// shared decoders the formats' parsers are built from (sampling, stop
// sequences, tools, tool_choice, response formats, text parts, the
// adapter, chat_template_kwargs), the client-facing error (Error, the
// 400s that name a parameter), and the view of a running generation a
// format renders: a Choice (the token loop's output so far: text, usage
// counts, log probabilities, tool calls, finish reason, performance
// object) and its Response (id, created, model, an Output to write to).
//
// Each format is a package of its own beside this one, which never
// imports package server: server/openai (chat and legacy completions),
// server/responses (OpenAI's Responses) and server/anthropic (Anthropic
// Messages). A format decodes its body into a Request and renders a
// response through a Wire; package server runs the exchange between the
// two (admission, the engine, the token loop, telemetry) and fills the
// Choice the wire reads. Responses and Messages build their output items
// with Outline (outline.go).
//
// Files: request.go (Request, the options every format reads alike),
// fields.go (the typed readers, each a 400 naming its field), agent.go
// (tools, tool_choice, formats), messages.go (text parts), penalties.go
// (sampling penalties and their ranges), error.go (Error), json.go (the
// allocation-free JSON appenders the wires write with), clip.go (bounded
// echo of client input), choice.go (Wire, Choice, Response, Output),
// toolcalls.go (the tool-call parse of a choice's text), logprobs.go,
// performance.go (metadata.performance), outline.go.
//
// Goroutines: none. A Choice, its Response and a Wire belong to the
// handler goroutine of their request.
package wire
