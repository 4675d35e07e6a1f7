package server

import (
	"strings"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// What a wire sees of a generation. The server's exchange (one per
// choice) runs the token loop and writes a choice; a wire reads it to
// render the records of a stream and the whole body of a response that
// is not streamed. Only the handler goroutine touches either.

// api names the wire format a request came in. It is a closed set.
type api uint8

const (
	apiChat api = iota
	apiCompletions
	apiResponses
	apiMessages
)

// wire renders one response of a wire format. Only the handler goroutine
// calls it. The choices are the response's (only chat and legacy
// completions have more than one).
type wire interface {
	// open writes the records a stream starts with, once its headers are
	// written.
	open(c *choice)
	// piece writes what one token (lp: its log probability, when asked) or
	// the held-back tail (lp nil) added to a streamed choice; pc may be
	// empty.
	piece(c *choice, pc *piece, lp *tokenLogprob)
	// timing writes a token's kiln.token_timing event.
	timing(c *choice, ev *latency.TokenEvent)
	// close writes the end of a stream: each choice's finish and, where the
	// format has one, its terminal performance object.
	close(cs []*choice)
	// whole writes the response of a request that is not streamed.
	whole(cs []*choice) error
	// cut ends a stream the shutdown grace cut: the client sees why it
	// ended rather than a bare EOF.
	cut(c *choice)
}

// response is what the choices of one response share.
type response struct {
	id      string
	created int64  // Unix seconds
	model   string // the served model's id
	out     output
	vocab   vocab
}

// output writes a response: the records of a stream, or the whole body.
type output interface {
	// write sends one SSE data record built by fill (which appends the
	// payload to its argument); after a failed write it writes nothing.
	write(fill func([]byte) []byte)
	// writeNamed sends one SSE record of the named event type.
	writeNamed(name string, fill func([]byte) []byte)
	// done writes the stream's [DONE].
	done()
	// writeWhole writes the body of a response that was not streamed.
	writeWhole(b []byte) error
}

// vocab gives a token's text, for log probabilities.
type vocab interface {
	Piece(id int) string
}

// choice is one choice of a response as the wires read it.
type choice struct {
	resp      *response
	req       *chatRequest
	index     int // the choice's index
	promptLen int

	text       strings.Builder // the completion (non-streaming, or captured)
	completion int             // tokens emitted to the client
	logprobs   []tokenLogprob  // the emitted tokens' log probabilities, when asked (logprobs.go)
	agent      *agentOut       // the tool-call parse of the text (toolstream.go), nil without tools

	// Set at the end: what the response reports.
	prefix       engine.PrefixUse // what the prompt reused from the prefix cache, from the engine's result
	stopSeq      string           // the stop sequence that ended the completion, "" for none
	finishReason string
	perf         performance
}
