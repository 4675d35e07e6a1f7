// Package server is Kiln's HTTP transport: the route table, the
// middleware, the generation handlers and the exchange they share (the
// streaming and whole answers of the four APIs), the SSE writer, the
// rolling decode stats, the recent-requests ring, health, debug state,
// resolved config, the training, adapter and maintenance routes, the
// embedded dashboard, the access-token middleware and one error wrapper
// that turns every handler error into the OpenAI error shape (Anthropic's
// under /v1/messages).
//
// A package per wire format, below this one and never importing it:
// server/wire is what they share (the internal request wire.Request, the
// field readers and shared decoders, wire.Error, the JSON appenders, and
// the Choice a wire reads of a running generation); server/openai parses
// chat and legacy completion bodies and renders their chunks and
// completions; server/responses parses, renders and stores OpenAI
// Responses; server/anthropic parses and renders Anthropic Messages and
// its errors. The handlers here (chat.go, completions.go, responses.go,
// anthropic.go) pair a format's parse with its wire and hand both to
// generate (chat.go), which checks and admits the request, encodes the
// prompt, submits it to the engine and runs the exchange (exchange.go,
// tokens.go): the token loop fills each choice's wire.Choice and calls the
// format's Wire to write it. The API-indexed tables (which body field a
// shared error names, the response id prefix, the span's API name) are
// formats.go's.
//
// Hardening, in the order a request meets it (routes.go builds the chain
// from the route table, so every route gets it): the Host check against
// DNS rebinding (hosts.go), the access token (a refused request moves no
// counter and makes no span), the drain gate (drain.go), and for a POST
// route the body middleware (body.go), which reads the whole body before
// the handler runs and so before it takes a stream slot, under its own
// deadline (408), the body limit (413 with a lingering close, linger.go),
// the in-flight byte budget (inflight.go, 429) and a UTF-8 check. Every
// write of a response has a deadline of the engine's eviction grace
// (errors.go), so a client that stops reading frees its handler and its
// slot. A prompt whose bytes cannot fit the context is refused before it
// is rendered or tokenized (size.go). Error messages repeat at most a
// bounded prefix of client input (wire.Clip).
//
// Routes beyond chat: POST /v1/completions (legacy text completion, the
// same generate path and token loop with a text_completion wire format,
// completions.go and server/openai), POST /tokenize and POST
// /detokenize (llama.cpp server shapes, tokenize.go), GET / (a redirect
// to /ui). CORS is off unless Config.CORSOrigins lists origins (cors.go);
// every response carries X-Request-Id, its trace id (requestid.go).
//
// Limits: a prompt that leaves no room in the context is a 400
// context_length_exceeded whose message states the prompt's and the
// context's lengths. A max_tokens beyond the room left is clipped to it,
// as OpenAI-compatible servers do: the response carries no extra field;
// finish_reason "length" and a usage whose prompt_tokens and
// completion_tokens add up to the context length are the signal. A legacy
// completion without max_tokens generates 16 tokens (OpenAI's default); a
// chat without it generates up to the context.
//
// Sampling parameters beyond temperature, top_p, top_k and seed are
// applied by the engine (engine/sampling/penalties.go): frequency_penalty and
// presence_penalty ([-2, 2], over generated tokens), repetition_penalty
// ((0, 10], over prompt and generated tokens), min_p ([0, 1]) and
// logit_bias (token id strings to [-100, 100]). Every range, these and
// temperature's, top_p's and top_k's, is sampling.Params.Validate's; a
// value out of range is a 400 naming the parameter (server/wire/penalties.go).
//
// The path of one token (tokens.go): the engine delivers an engine.Token on
// the request's channel; the handler stamps handler_received, decodes the
// token's text, writes its content chunk and flushes, stamps body_enqueued,
// records the token with telemetry and, with include_performance: true,
// writes the kiln.token_timing event telemetry returns. Every emitted token
// gets exactly one content chunk (possibly with empty content: a special
// token, or text held back for an incomplete UTF-8 sequence or a possible
// stop sequence) followed by its timing event. Stop sequences are applied
// here over decoded text; stop token ids go to the engine.
//
// Each request's telemetry identity (Telemetry.NewRequestID, reserved
// before submission) is also its engine.Request.ID, so the blockers the
// engine reports with a token (another request's prefill pass, an
// ownership wait) reach telemetry, converted in a per-request array
// without allocating, and a stall span links to the chat span of the
// request that blocked it. The handler also keeps, per request, what the
// dashboard's Latency diagnosis needs (diagnosis.go): every retained
// token's timing and the stalled gaps with their blockers, named by public
// request id; GET /v1/stats/recent-requests/{id} serves them.
//
// Goroutines: the server starts none per request beyond net/http's handler
// goroutine, which owns its request from decoding to the last byte and
// passes the request's context to engine.Submit, so a client that goes
// away cancels its generation and frees its engine slot at once. Start
// runs one serving goroutine; Shutdown drains (drain.go): it stops
// admitting but keeps the listener open, answering new requests 503 with
// Retry-After and /health "draining", waits for in-flight requests until
// its context ends, then cuts the rest cleanly (a stream ends with an
// error event and [DONE], a non-streaming request gets a 503) and returns
// ErrDrainCut, closes the listener and waits for that goroutine. The engine and
// the telemetry are owned by the caller (cmd/kiln), which stops them after
// Shutdown returns.
package server
