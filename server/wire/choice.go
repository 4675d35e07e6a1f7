package wire

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// What a wire sees of a generation. The server's exchange (one per
// choice) runs the token loop and writes a choice; a wire reads it to
// render the records of a stream and the whole body of a response that
// is not streamed. Only the handler goroutine touches either.

// API names the wire format a request came in. It is a closed set.
type API uint8

const (
	APIChat API = iota
	APICompletions
	APIResponses
	APIMessages
)

// Wire renders one response of a wire format. Only the handler goroutine
// calls it. The choices are the response's (only chat and legacy
// completions have more than one).
type Wire interface {
	// Open writes the records a stream starts with, once its headers are
	// written.
	Open(c *Choice)
	// Piece writes what one token (lp: its log probability, when asked) or
	// the held-back tail (lp nil) added to a streamed choice; pc may be
	// empty.
	Piece(c *Choice, pc *Piece, lp *TokenLogprob)
	// Timing writes a token's kiln.token_timing event.
	Timing(c *Choice, ev *latency.TokenEvent)
	// Close writes the end of a stream: each choice's finish and, where the
	// format has one, its terminal performance object.
	Close(cs []*Choice)
	// Whole writes the response of a request that is not streamed.
	Whole(cs []*Choice) error
	// Cut ends a stream the shutdown grace cut: the client sees why it
	// ended rather than a bare EOF.
	Cut(c *Choice)
}

// Response is what the choices of one response share.
type Response struct {
	ID      string // chatcmpl-…, cmpl-…, resp_… or msg_…
	Created int64  // Unix seconds
	Model   string // the served model's id
	Out     Output
	Vocab   Vocab
}

// Output writes a response: the records of a stream, or the whole body.
type Output interface {
	// Write sends one SSE data record built by fill (which appends the
	// payload to its argument); after a failed write it writes nothing.
	Write(fill func([]byte) []byte)
	// WriteNamed sends one SSE record of the named event type.
	WriteNamed(name string, fill func([]byte) []byte)
	// Done writes the stream's [DONE].
	Done()
	// WriteWhole writes the body of a response that was not streamed.
	WriteWhole(b []byte) error
}

// Vocab gives a token's text, for log probabilities.
type Vocab interface {
	Piece(id int) string
}

// Choice is one choice of a response as the wires read it: the server's
// token loop writes it, a wire only reads it (what a wire must remember,
// it keeps itself).
type Choice struct {
	Resp      *Response // the response the choice is part of
	Req       *Request
	Index     int // the choice's index
	PromptLen int // the prompt's tokens

	Text       strings.Builder // the completion (non-streaming, or captured)
	Completion int             // tokens emitted to the client
	Logprobs   []TokenLogprob  // the emitted tokens' log probabilities, when asked (logprobs.go)
	Agent      *AgentOut       // the tool-call parse of the text (toolcalls.go), nil without tools

	// Set at the end: what the response reports.
	Prefix       engine.PrefixUse // what the prompt reused from the prefix cache, from the engine's result
	StopSequence string           // the stop sequence that ended the completion, "" for none
	FinishReason string           // OpenAI's, with error, timeout and client_disconnect
	Perf         Performance      // metadata.performance; Perf.OK false when it does not apply
}

// NewID returns an id of the form the APIs use: prefix, then 24 random
// hex digits.
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
