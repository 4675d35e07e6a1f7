package openai

import (
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

var _ wire.Wire = (*Wire)(nil)

// Wire is the OpenAI format of chat and legacy completions
// (chat.go, completions.go), one per response; its zero value is ready.
// It keeps, per choice, whether the choice's first chunk (the one with
// the role) was written.
type Wire struct {
	roleSent []bool
}

// NewWire is the wire of one response.
func NewWire() *Wire { return &Wire{} }

// Open writes nothing: an OpenAI stream starts with its first chunk.
func (*Wire) Open(*wire.Choice) {}

// Piece writes the token's chunk: a text_completion, or a
// chat.completion.chunk whose delta is the piece.
func (w *Wire) Piece(c *wire.Choice, pc *wire.Piece, lp *wire.TokenLogprob) {
	if c.Req.Legacy {
		c.Resp.Out.Write(func(b []byte) []byte { return appendTextChunk(b, c, pc.Content, lp) })
		return
	}
	for len(w.roleSent) <= c.Index {
		w.roleSent = append(w.roleSent, false)
	}
	role := !w.roleSent[c.Index]
	w.roleSent[c.Index] = true
	c.Resp.Out.Write(func(b []byte) []byte { return appendPieceChunk(b, c, role, pc, lp) })
}

// Timing writes the event as its own data line, right after the token's
// chunk: the events pair with the chunks one to one.
func (*Wire) Timing(c *wire.Choice, ev *latency.TokenEvent) { c.Resp.Out.Write(ev.AppendJSON) }

// Close writes each choice's terminal chunk, the usage chunk when asked
// and [DONE].
func (*Wire) Close(cs []*wire.Choice) { endStream(cs) }

// Whole writes the chat.completion (or text_completion) with every
// choice.
func (*Wire) Whole(cs []*wire.Choice) error { return writeCompletion(cs) }

// Cut ends the stream with the error object of the cut, then [DONE].
func (*Wire) Cut(c *wire.Choice) {
	c.Resp.Out.Write(func(b []byte) []byte { return appendErrorObject(b, wire.ErrCut) })
	c.Resp.Out.Done()
}
