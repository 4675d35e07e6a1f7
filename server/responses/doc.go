// Package responses is Kiln's OpenAI Responses wire format (POST
// /v1/responses): Parse decodes a body (instructions, input items,
// previous_response_id, flat function tools, text.format, reasoning,
// include and top_logprobs) into the shared request (server/wire), with
// chat's rules behind every field, and returns the Wire that renders the
// answer: the response object with its output items (a reasoning item,
// a message with one output_text part, function_call items), streamed as
// typed events with sequence numbers, or whole.
//
// The Store keeps, in memory for an hour and at most --responses-store
// of them, what a response made with store true leaves for later turns:
// its conversation (previous_response_id), its output items
// (item_reference) and its object (GET /v1/responses/{id}, which package
// server routes to Store.Body).
//
// Files: request.go and input.go decode; wire.go and object.go render;
// store.go is the Store.
//
// The package never imports package server. Goroutines: none; a Wire
// belongs to its request's handler goroutine, and the Store is safe for
// concurrent use.
package responses
