package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry"
)

// exchange is the state of one chat request from submission to the end of
// its response. Only the handler goroutine touches it.
type exchange struct {
	s      *Server
	req    *chatRequest
	w      http.ResponseWriter
	r      *http.Request
	treq   *telemetry.Request // also keeps the first and last token instants
	cancel context.CancelFunc
	sse    *sseWriter // nil unless streaming

	received    time.Time
	id          string
	created     int64
	promptLen   int
	metadata    bool // terminal performance metadata
	events      bool // per-token kiln.token_timing events
	captureText bool

	stop stopMatcher
	dec  interface {
		Next(id int) string
		Flush() string
	}

	text       strings.Builder // the completion (non-streaming, or captured)
	completion int             // tokens emitted to the client
	stopHit    bool            // a stop sequence ended the completion
	roleSent   bool            // the first chunk (with the role) was written
	cutOff     bool            // the shutdown grace ended the generation (drain.go)
	writeErr   error
	prefix     engine.PrefixUse // what the prompt reused from the prefix cache (prefix.go), from the engine's result

	diag diagRecorder // the record's Latency diagnosis data (diagnosis.go)
}

func (s *Server) newExchange(w http.ResponseWriter, r *http.Request, req *chatRequest, treq *telemetry.Request,
	cancel context.CancelFunc, received time.Time, promptLen int) *exchange {
	x := &exchange{
		s: s, req: req, w: w, r: r, treq: treq, cancel: cancel,
		received:    received,
		id:          completionID(req),
		created:     time.Now().Unix(),
		promptLen:   promptLen,
		metadata:    s.wantMetadata(req),
		events:      req.IncludePerformance != nil && *req.IncludePerformance,
		stop:        stopMatcher{stops: req.Stop},
		dec:         s.tok.NewDecoder(),
		captureText: s.cfg.RecentRequestText,
	}
	s.recent.begin(treq.ID(), x.id)
	return x
}

// run streams the tokens (tokens.go), ends the request's telemetry and
// writes the end of the response.
func (x *exchange) run(stream generation) error {
	x.stream(stream.Tokens())
	res := stream.Result()
	x.prefix = res.Prefix
	x.s.logFault(x.r, res.Err)
	finish, outcome := x.finish(res)
	// The end is read once, from the clock of every other instant of the
	// request: the span, the performance object and the record agree.
	ended := x.s.clock.Now()
	sum := x.treq.End(telemetry.EndInfo{
		Outcome:          outcome,
		FinishReason:     finish,
		PromptTokens:     x.promptLen,
		CompletionTokens: x.completion,
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

	if outcome == telemetry.OutcomeClientDisconnect {
		return nil // nobody to answer
	}
	if x.cutOff {
		return x.endCut()
	}
	perf := performance{}
	if x.metadata {
		perf = x.performance(finish, totalMs, sum)
	}
	if !x.req.Stream {
		if x.completion == 0 && res.Finish == engine.FinishError {
			return fmt.Errorf("generation failed: %w", errOr(res.Err))
		}
		return x.writeCompletion(finish, perf)
	}
	return x.endStream(finish, perf)
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

// errCut is what a request cut at the end of the shutdown grace gets.
var errCut = &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "service_unavailable",
	Message: "the server shut down before the request completed; retry it"}

// endCut ends a request cut by shutdown: a stream gets an OpenAI error
// event and [DONE], so the client sees why it ended rather than a bare
// EOF; a non-streaming request gets the 503.
func (x *exchange) endCut() error {
	if !x.req.Stream {
		return errCut
	}
	x.write(func(b []byte) []byte { return appendErrorObject(b, errCut) })
	if x.writeErr == nil {
		if err := x.sse.done(); err != nil {
			x.writeErr = err
		}
	}
	return nil
}
