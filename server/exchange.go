package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

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
	writeErr   error

	diag diagRecorder // the record's Latency diagnosis data (diagnosis.go)
}

func (s *Server) newExchange(w http.ResponseWriter, r *http.Request, req *chatRequest, treq *telemetry.Request,
	cancel context.CancelFunc, received time.Time, promptLen int) *exchange {
	x := &exchange{
		s: s, req: req, w: w, r: r, treq: treq, cancel: cancel,
		received:    received,
		id:          newID(),
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
		Err:              res.Err,
		End:              ended,
	})
	x.s.countOutcome(outcome)
	totalMs := msSince(x.received, ended)
	x.s.recent.add(x.record(finish, ended, totalMs, sum))

	if outcome == telemetry.OutcomeClientDisconnect {
		return nil // nobody to answer
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
// with SPEC section 9's error, timeout, client_disconnect) and the
// telemetry outcome.
func (x *exchange) finish(res engine.Result) (string, telemetry.Outcome) {
	switch {
	case x.writeErr != nil || (x.r.Context().Err() != nil && !x.stopHit):
		return "client_disconnect", telemetry.OutcomeClientDisconnect
	case x.stopHit:
		return "stop", telemetry.OutcomeOK
	}
	switch res.Finish {
	case engine.FinishStop:
		return "stop", telemetry.OutcomeOK
	case engine.FinishLength:
		return "length", telemetry.OutcomeOK
	case engine.FinishEvicted:
		return "timeout", telemetry.OutcomeTimeout
	case engine.FinishCancelled:
		return "client_disconnect", telemetry.OutcomeClientDisconnect
	default:
		return "error", telemetry.OutcomeError
	}
}

// msSince is the saturating difference b - a in milliseconds.
func msSince(a, b time.Time) float64 { return timing.Ms(timing.Elapsed(a, b)) }
