package server

import (
	"fmt"
	"net/http"
	"reflect"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/server/wire"
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

// stream runs the token loop of a single choice until the engine closes
// the channel, then emits the tail the decoder and the stop matcher held
// back.
func (x *exchange) stream(tokens <-chan engine.Token) {
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
			x.reply.cancel()
			cut = nil
			continue
		}
		if !ok {
			break
		}
		x.deliver(tok)
	}
	x.tail()
}

// streamChoices runs the token loop of n > 1 choices, taking each token
// as its choice's engine delivers it, until every channel is closed.
func streamChoices(xs []*exchange, streams []generation) {
	cases := make([]reflect.SelectCase, len(xs)+1)
	for i, st := range streams {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(st.Tokens())}
	}
	cases[len(xs)] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(xs[0].s.cut)}
	for open := len(xs); open > 0; {
		i, v, ok := reflect.Select(cases)
		switch {
		case i == len(xs):
			xs[0].cutOff = true
			xs[0].reply.cancel()
			cases[i].Chan = reflect.Value{} // a nil channel: never again
		case !ok:
			cases[i].Chan = reflect.Value{}
			open--
			xs[i].tail()
		default:
			xs[i].deliver(v.Interface().(engine.Token))
		}
	}
}

// deliver handles one token unless the choice's output already ended: a
// stop sequence, a failed write or the shutdown cut leave the rest the
// engine had delivered to be drained.
func (x *exchange) deliver(tok engine.Token) {
	if x.stopHit || x.writeErr != nil || x.cutOff {
		return
	}
	x.token(tok)
}

// tail emits what the decoder and the stop matcher held back once the
// choice's tokens have ended: the tail held back for a possible stop
// sequence or an incomplete UTF-8 sequence is part of the completion.
func (x *exchange) tail() {
	if x.writeErr != nil || x.stopHit || x.cutOff {
		return
	}
	tail, hit := x.stop.push(x.dec.Flush())
	if !hit {
		tail += x.stop.flush()
	}
	x.stopHit = hit
	if tail != "" {
		x.Text.WriteString(tail)
	}
	pc := wire.Piece{Content: tail}
	if x.Agent != nil {
		pc = x.Agent.Push(tail)
		rest := x.Agent.Flush()
		pc.Content += rest.Content
		pc.Reasoning += rest.Reasoning
		pc.Calls = append(pc.Calls, rest.Calls...)
	}
	if x.sse != nil && !pc.Empty() {
		x.wire.Piece(&x.Choice, &pc, nil)
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
	x.Text.WriteString(out)
	x.Completion++
	lp := x.logprob(&tok)

	pc := wire.Piece{Content: out}
	if x.Agent != nil {
		pc = x.Agent.Push(out)
	}
	var enq time.Time
	if x.sse != nil {
		x.wire.Piece(&x.Choice, &pc, lp)
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
		x.wire.Timing(&x.Choice, &ev)
	}
	if hit {
		x.stopHit = true
		x.cancel() // free the engine slot at once
	}
}

// logprob records tok's entry when the request asked for log
// probabilities and tok is text; it returns the entry (nil otherwise).
func (x *exchange) logprob(tok *engine.Token) *wire.TokenLogprob {
	if !x.req.Agent.Logprobs || x.s.tok.IsSpecial(tok.ID) {
		return nil
	}
	off := 0
	if n := len(x.Logprobs); n > 0 {
		last := &x.Logprobs[n-1]
		off = last.Offset + len(x.s.tok.Piece(last.ID))
	}
	x.Logprobs = append(x.Logprobs, wire.TokenLogprob{ID: tok.ID, Logprob: tok.Logprob, Top: tok.TopLogprobs, Offset: off})
	return &x.Logprobs[len(x.Logprobs)-1]
}

// Write sends one SSE record; the first failure (the client went away)
// cancels the generation of every choice so the engine frees the slots.
func (p *reply) Write(fill func([]byte) []byte) {
	if p.writeErr != nil {
		return
	}
	if err := p.sse.event(fill); err != nil {
		p.writeErr = err
		p.cancel()
	}
}

// WriteNamed sends one SSE record of the named event type.
func (p *reply) WriteNamed(name string, fill func([]byte) []byte) {
	if p.writeErr != nil {
		return
	}
	if err := p.sse.named(name, fill); err != nil {
		p.writeErr = err
		p.cancel()
	}
}

// Done writes the stream's [DONE].
func (p *reply) Done() {
	if p.writeErr == nil {
		if err := p.sse.done(); err != nil {
			p.writeErr = err
		}
	}
}

// WriteWhole writes the body of a response that was not streamed.
func (p *reply) WriteWhole(b []byte) error {
	p.w.Header().Set("Content-Type", "application/json")
	p.w.WriteHeader(http.StatusOK)
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
