// Package server is Kiln's HTTP transport: the OpenAI-compatible chat
// handler (streaming and not), the SSE writer, the rolling decode stats,
// the recent-requests ring, health, debug state, resolved config, the
// embedded dashboard, the access-token middleware and one error wrapper
// that turns every handler error into the OpenAI error shape.
//
// The path of one token (chat.go): the engine delivers an engine.Token on
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
// runs one serving goroutine; Shutdown stops admitting (503 with
// Retry-After), waits for in-flight requests until its context ends (then
// closes their connections) and waits for that goroutine. The engine and
// the telemetry are owned by the caller (cmd/kiln), which stops them after
// Shutdown returns.
package server
