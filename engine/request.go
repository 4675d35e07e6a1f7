package engine

import (
	"errors"
	"time"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// Errors a caller acts on.
var (
	// ErrQueueFull means the admission queue is at capacity; the server
	// answers 429 with Retry-After.
	ErrQueueFull = errors.New("engine: admission queue full")
	// ErrStopped means the engine is shutting down or stopped; 503.
	ErrStopped = errors.New("engine: stopped")
	// ErrTooLong means the prompt (plus one generated token) does not fit the
	// model's context; a client error.
	ErrTooLong = errors.New("engine: prompt exceeds the context length")
)

// Request is one generation submitted to the engine.
type Request struct {
	Prompt    []int           // token ids, already templated; must not be empty
	MaxTokens int             // tokens to generate at most (> 0); capped by the context
	Sampling  sampling.Params // decoding parameters; Submit validates them
	StopIDs   []int           // token ids that end generation (end-of-sequence); the stop token is emitted
	Submitted time.Time       // instant the caller counts from; zero means now
	// ID is an opaque identity the caller chooses (0 means none). The
	// engine only reports it back: in the Blockers of the tokens of other
	// requests that this request's prefill delayed, and of its own.
	ID uint64
	// Adapter is the adapter the request runs with (nil: the base model;
	// adapter.go). When it is not the loaded one, the engine swaps through
	// the actor barrier before admitting it; it never batches rows of
	// different adapters together.
	Adapter Adapter
	// Constraint, when set, restricts the tokens the request may sample
	// (a grammar: structured output, forced tool calls). Its Mask runs
	// inside the sampling phase, so its cost is on the request's clock.
	Constraint Constraint
	// Logprobs asks each token to carry its log probability and the
	// TopLogprobs most likely alternatives (0..sampling.MaxTopLogprobs),
	// from the model's distribution before any sampling control
	// (sampling.Logprobs).
	Logprobs    bool
	TopLogprobs int
}

// Constraint restricts a request's tokens. The actor calls Mask with the
// logits row a token is about to be sampled from and then Accept with the
// token sampled; a Constraint belongs to one request.
type Constraint interface {
	// Mask sets the logits of the tokens it forbids to -Inf. remaining
	// is how many tokens the request may still generate, this one
	// included: a grammar closes its document before the budget ends.
	Mask(logits []float32, remaining int)
	// Accept advances past the sampled token; an error means the token
	// was not one Mask allowed (a defect), and fails the request.
	Accept(id int) error
}

// FinishReason says why a request ended.
type FinishReason string

// Finish reasons.
const (
	FinishStop      FinishReason = "stop"      // a stop token was emitted
	FinishLength    FinishReason = "length"    // MaxTokens or the context was reached
	FinishCancelled FinishReason = "cancelled" // the caller's context ended
	FinishEvicted   FinishReason = "evicted"   // the consumer stopped reading past the grace
	FinishError     FinishReason = "error"     // the engine failed or stopped
)

// ErrInvalidRequest means a request's fields are out of range (empty
// prompt, a token id outside the vocabulary, MaxTokens < 1, bad sampling
// parameters); a client error.
var ErrInvalidRequest = errors.New("engine: invalid request")
