// Package openai is Kiln's OpenAI wire format: the bodies of POST
// /v1/chat/completions (ParseChat: messages, options, tools,
// response_format, logprobs, n) and POST /v1/completions
// (ParseCompletion: a text prompt, 16 tokens unless max_tokens says
// otherwise) decoded into the shared request (server/wire), and the Wire
// that renders the response: chat.completion.chunk or text_completion
// records with their terminal and usage chunks and [DONE] for a stream,
// and the whole chat.completion or text_completion otherwise, with
// metadata.performance when it applies. AppendError is the OpenAI error
// body every route outside /v1/messages answers with.
//
// Files: chat_request.go, messages.go and agent.go decode a chat body;
// completions_request.go a legacy one; chat.go, completions.go,
// toolcalls.go and logprobs.go render; wire.go is the Wire; errors.go
// the error body.
//
// The package never imports package server; server's handlers call it.
// Goroutines: none; a Wire belongs to its request's handler goroutine.
package openai
