package telemetry

import (
	"context"
	"time"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// RequestInfo describes a request at its start.
type RequestInfo struct {
	Model    string    // the requested model id (span attribute, never a label)
	Received time.Time // request receipt: the instant every *_ms counts from
	Stream   bool
}

// EndInfo describes how a request ended.
type EndInfo struct {
	Outcome          Outcome
	FinishReason     string // stop, length, error, timeout, client_disconnect
	PromptTokens     int
	CompletionTokens int
	// Engine instants (engine.Result); zero when unknown.
	Submitted, Admitted, PrefillDone time.Time
	Err                              error
}

// Request is the telemetry of one request. Its methods are called from the
// request's handler goroutine only.
type Request struct {
	t  *Telemetry
	tr latency.Tracker
}

// StartRequest starts the request's `chat {model}` span under ctx.
func (t *Telemetry) StartRequest(ctx context.Context, info RequestInfo) (context.Context, *Request) {
	r := &Request{t: t}
	r.tr.Reset(info.Received)
	return ctx, r
}

// Phase records a phase the server measured (tokenization).
func (r *Request) Phase(p latency.Phase, start, end time.Time) { r.tr.AddPhase(p, end.Sub(start)) }

// Token records one emitted token and returns its SSE timing event.
func (r *Request) Token(tt latency.TokenTiming) latency.TokenEvent { return r.tr.Observe(tt) }

// End ends the request and returns its summary; idempotent.
func (r *Request) End(info EndInfo) latency.Summary { return r.tr.Summary() }
