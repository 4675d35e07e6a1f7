// Package anthropic is Kiln's Anthropic Messages wire format (POST
// /v1/messages and /v1/messages/count_tokens): Parse and
// ParseCountTokens decode a body (system, user and assistant turns of
// content blocks, tools with input_schema, tool_choice, thinking,
// stop_sequences) into the shared request (server/wire), with chat's
// rules behind every field, and the Wire renders the answer: the message
// with its content blocks (thinking, text, tool_use), streamed as named
// events (message_start, content_block_start, the deltas,
// content_block_stop, message_delta, message_stop) or whole.
//
// Every route under /v1/messages (IsRoute) answers errors in
// Anthropic's shape, whatever refused the request; package server's
// error writer asks IsRoute and writes AppendError's body there.
//
// Files: request.go and messages.go decode; wire.go renders; errors.go
// is the error shape.
//
// The package never imports package server. Goroutines: none; a Wire
// belongs to its request's handler goroutine.
package anthropic
