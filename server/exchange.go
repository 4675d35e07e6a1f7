package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// reply is the HTTP response of one generation request, which its
// choices share (n > 1 runs one exchange per choice). Only the handler
// goroutine touches it. It is the response's output (wire.Output).
type reply struct {
	wire.Response
	w    http.ResponseWriter
	r    *http.Request
	sse  *sseWriter // nil unless streaming
	wire wire.Wire  // the request's wire format (server/wire/choice.go)

	cancels  []context.CancelFunc // one per choice
	cutOff   bool                 // the shutdown grace ended the generation (drain.go)
	writeErr error
}

var _ wire.Output = (*reply)(nil)

// job is a decoded request with what the server resolved for it before
// it runs: the wire that answers it, the adapter and the grammar.
type job struct {
	*wire.Request
	wire    wire.Wire
	adapter *lora.Adapter   // what it runs with, resolved by generate (nil: base)
	grammar *requestGrammar // the constraint's compiled grammar (constraint.go), nil for none
}

// cancel ends every choice's generation (the client went away, or the
// shutdown grace ended), so the engine frees their slots.
func (p *reply) cancel() {
	for _, c := range p.cancels {
		c()
	}
}

// exchange is the state of one choice of a generation request from
// submission to the end of its response. Only the handler goroutine
// touches it. Its choice is what the wire reads (wire.Choice).
type exchange struct {
	*reply
	wire.Choice
	s      *Server
	req    *job
	treq   *telemetry.Request // also keeps the first and last token instants
	cancel context.CancelFunc // ends this choice's generation

	received    time.Time
	metadata    bool // terminal performance metadata
	events      bool // per-token kiln.token_timing events
	captureText bool

	stop stopMatcher
	dec  interface {
		Next(id int) string
		Flush() string
	}

	stopHit bool              // a stop sequence ended the completion
	constr  *choiceConstraint // the choice's grammar matcher (constraint.go), nil without one

	diag diagRecorder // the record's Latency diagnosis data (diagnosis.go)
}

func (s *Server) newReply(w http.ResponseWriter, r *http.Request, req *job) *reply {
	p := &reply{w: w, r: r, wire: req.wire}
	p.Response = wire.Response{ID: completionID(req.Request), Created: time.Now().Unix(), Model: s.modelID, Out: p, Vocab: s.tok}
	return p
}

func (s *Server) newExchange(p *reply, req *job, treq *telemetry.Request, index int,
	cancel context.CancelFunc, received time.Time, promptLen int) *exchange {
	x := &exchange{
		reply: p, s: s, req: req, treq: treq, cancel: cancel,
		Choice:      wire.Choice{Resp: &p.Response, Req: req.Request, Index: index, PromptLen: promptLen},
		received:    received,
		metadata:    s.wantMetadata(req.Request),
		events:      req.IncludePerformance != nil && *req.IncludePerformance,
		stop:        stopMatcher{stops: req.Stop},
		dec:         s.tok.NewDecoder(),
		captureText: s.cfg.RecentRequestText,
	}
	s.recent.begin(treq.ID(), x.ID)
	return x
}

// run streams the choices' tokens (tokens.go), ends their telemetry and
// writes the end of the response.
func (p *reply) run(xs []*exchange, streams []generation) error {
	if p.r.Context().Err() == nil && xs[0].req.Stream {
		p.sse = newSSEWriter(p.w)
		if err := p.sse.start(); err != nil {
			p.writeErr = err
			p.cancel()
		} else {
			p.wire.Open(&xs[0].Choice)
		}
	}
	if len(xs) == 1 {
		xs[0].stream(streams[0].Tokens())
	} else {
		streamChoices(xs, streams)
	}
	for i, x := range xs {
		x.end(streams[i].Result())
	}
	for _, x := range xs {
		if x.FinishReason == "client_disconnect" {
			return nil // nobody to answer
		}
	}
	x := xs[0]
	if p.cutOff {
		if !x.req.Stream {
			return wire.ErrCut
		}
		p.wire.Cut(&x.Choice)
		return nil
	}
	cs := make([]*wire.Choice, len(xs))
	for i, x := range xs {
		cs[i] = &x.Choice
	}
	if !x.req.Stream {
		for i, x := range xs {
			if res := streams[i].Result(); x.Completion == 0 && res.Finish == engine.FinishError {
				return fmt.Errorf("generation failed: %w", errOr(res.Err))
			}
		}
		return p.wire.Whole(cs)
	}
	p.wire.Close(cs)
	return nil // a failed write means the client left; nothing to report to it
}

// end ends the choice's telemetry and records it, and sets what the
// response reports: its finish reason and performance object.
func (x *exchange) end(res engine.Result) {
	x.Prefix = res.Prefix
	x.s.logFault(x.r, res.Err)
	finish, outcome := x.finish(res)
	if finish == "stop" && x.Agent.Called() {
		finish = "tool_calls"
	}
	// The end is read once, from the clock of every other instant of the
	// request: the span, the performance object and the record agree.
	ended := x.s.clock.Now()
	if u := x.constraintUse(finish); u != nil {
		x.treq.GrammarEnd(u.MaskMs, u.Forced, u.Truncated)
	}
	sum := x.treq.End(telemetry.EndInfo{
		Outcome:          outcome,
		FinishReason:     finish,
		PromptTokens:     x.PromptLen,
		CompletionTokens: x.Completion,
		Submitted:        res.Submitted,
		Admitted:         res.Admitted,
		AdmissionDone:    res.AdmissionDone,
		PrefillDone:      res.PrefillDone,
		Prefix:           res.Prefix,
		Err:              res.Err,
		End:              ended,
	})
	x.s.countOutcome(outcome)
	totalMs := msSince(x.received, ended)
	x.s.recent.add(x.record(finish, ended, totalMs, sum))
	x.FinishReason = finish
	x.StopSequence = x.stop.hit
	if x.metadata {
		x.Perf = x.performance(finish, totalMs, sum)
	}
}

// performance builds the object at the request's end; totalMs is receipt
// to end.
func (x *exchange) performance(finish string, totalMs float64, sum latency.Summary) wire.Performance {
	p := wire.Performance{
		OK:               true,
		Latency:          sum,
		PromptTokens:     x.PromptLen,
		CompletionTokens: x.Completion,
		TTFTMs:           sum.TTFTMs,
		TotalLatencyMs:   totalMs,
		FinishReason:     finish,
		AdapterUsed:      lora.Name(x.req.adapter),
		Prefix:           x.Prefix,
		Constraint:       x.constraintUse(finish),
	}
	// Decode throughput over the gaps: tokens after the first per second
	// between the first and the last token; null without a gap.
	first, last := x.treq.TokenReady()
	if d := last.Sub(first); x.Completion > 1 && d > 0 {
		p.DecodeTokensPerSec = latency.Float(float64(x.Completion-1) / d.Seconds())
	}
	return p
}

func errOr(err error) error {
	if err == nil {
		return errors.New("engine error")
	}
	return err
}

// finish maps the engine's result to the OpenAI finish_reason (extended
// with error, timeout and client_disconnect: docs/http-api.md#post-v1chatcompletions) and the
// telemetry outcome.
//
// An eviction is a timeout even when the client's connection then failed
// or closed: the engine gave up on a consumer that stopped reading (its
// writes blocked past the grace), which is what made the client go.
func (x *exchange) finish(res engine.Result) (string, telemetry.Outcome) {
	switch {
	case res.Finish == engine.FinishEvicted && !x.stopHit:
		return "timeout", telemetry.OutcomeTimeout
	case x.writeErr != nil || (x.r.Context().Err() != nil && !x.stopHit):
		return "client_disconnect", telemetry.OutcomeClientDisconnect
	case x.stopHit:
		return "stop", telemetry.OutcomeOK
	case x.cutOff:
		return "error", telemetry.OutcomeError
	}
	switch res.Finish {
	case engine.FinishStop:
		return "stop", telemetry.OutcomeOK
	case engine.FinishLength:
		return "length", telemetry.OutcomeOK
	case engine.FinishCancelled:
		return "client_disconnect", telemetry.OutcomeClientDisconnect
	default:
		return "error", telemetry.OutcomeError
	}
}

// logFault logs, with its stack, an engine fault that failed this request
// (the client sees only an internal error).
func (s *Server) logFault(r *http.Request, err error) {
	var f *engine.Fault
	if !errors.As(err, &f) {
		return
	}
	ev := s.log.Error()
	if sc := trace.SpanContextFromContext(r.Context()); sc.HasTraceID() {
		ev = ev.Str("trace_id", sc.TraceID().String())
	}
	if f.Stage != engine.StageSample {
		// The engine failed: its watcher (kiln serve) logs the stack once.
		ev.Err(f).Msg("the engine failed during this request")
		return
	}
	ev.Str("stage", f.Stage).Str("stack", string(f.Stack)).Err(f).Msg("an engine fault failed this request; the engine carries on")
}

// msSince is the saturating difference b - a in milliseconds.
func msSince(a, b time.Time) float64 { return timing.Ms(timing.Elapsed(a, b)) }
