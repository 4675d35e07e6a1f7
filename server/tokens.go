package server

import (
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// The token loop.
//
// The path of one token: the engine delivers an engine.Token on the
// request's channel; the handler stamps handler_received, decodes its text
// (a special token, or bytes held back for an incomplete UTF-8 sequence or a
// possible stop sequence, give empty text), writes its content chunk and
// flushes, stamps body_enqueued, records the token with telemetry (which
// keeps the first and last token instants) and, when the request said
// include_performance: true, writes the returned kiln.token_timing event as
// its own data line. Every emitted token gets exactly one content chunk
// (its content may be "") followed by at most one timing event, so the
// events pair with chunks one to one.

// stream runs the token loop until the engine closes the channel, then
// emits the tail the decoder and the stop matcher held back.
func (x *exchange) stream(tokens <-chan engine.Token) {
	if x.req.Stream {
		x.sse = newSSEWriter(x.w)
		if err := x.sse.start(); err != nil {
			x.writeErr = err
			x.cancel()
		}
	}
	cut := x.s.cut
	for {
		var tok engine.Token
		var ok bool
		select {
		case tok, ok = <-tokens:
		case <-cut:
			// The shutdown grace ended: end the generation; run writes
			// the stream's end (or the 503) once the engine has let go.
			x.cutOff = true
			x.cancel()
			cut = nil
			continue
		}
		if !ok {
			break
		}
		if x.stopHit || x.writeErr != nil || x.cutOff {
			continue // drain what the engine had already delivered
		}
		x.token(tok)
	}
	if x.writeErr != nil || x.stopHit || x.cutOff {
		return
	}
	// The tail held back for a possible stop sequence or an incomplete
	// UTF-8 sequence is part of the completion.
	tail, hit := x.stop.push(x.dec.Flush())
	if !hit {
		tail += x.stop.flush()
	}
	x.stopHit = hit
	if tail != "" {
		x.text.WriteString(tail)
		if x.sse != nil {
			x.write(func(b []byte) []byte { return x.appendChunk(b, tail) })
		}
	}
}

// token handles one engine token: text, content chunk, telemetry, event.
func (x *exchange) token(tok engine.Token) {
	recv := x.s.clock.Now()
	text := ""
	if !x.s.tok.IsSpecial(tok.ID) {
		text = x.dec.Next(tok.ID)
	}
	out, hit := x.stop.push(text)
	x.text.WriteString(out)
	x.completion++

	var enq time.Time
	if x.sse != nil {
		x.write(func(b []byte) []byte { return x.appendChunk(b, out) })
		enq = x.s.clock.Now()
	}
	ev := x.treq.Token(latency.TokenTiming{
		Index:             tok.Index,
		ID:                tok.ID,
		Ready:             tok.Ready,
		ProducerDelivered: tok.Delivered,
		HandlerReceived:   recv,
		BodyEnqueued:      enq,
		Phases:            tok.Phases,
		Blockers:          tokenBlockers(&tok),
	})
	x.diag.observe(&ev, &tok.Phases, tokenBlockers(&tok), x.treq.ID(), x.received)
	if x.sse != nil && x.events {
		x.write(ev.AppendJSON)
	}
	if hit {
		x.stopHit = true
		x.cancel() // free the engine slot at once
	}
}

// write sends one SSE record; the first failure (the client went away)
// cancels the generation so the engine frees the slot.
func (x *exchange) write(fill func([]byte) []byte) {
	if x.writeErr != nil {
		return
	}
	if err := x.sse.event(fill); err != nil {
		x.writeErr = err
		x.cancel()
	}
}
