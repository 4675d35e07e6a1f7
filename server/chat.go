package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/toolcall"
	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// chat serves POST /v1/chat/completions: it admits the request, decodes
// and checks it, encodes the prompt (prompt.go), submits it to the engine
// and hands the token stream to an exchange (exchange.go), which runs the
// token loop (tokens.go), writes the OpenAI wire format (server/openai) and
// the performance object (exchange.go, server/wire/performance.go).
func (s *Server) chat(w http.ResponseWriter, r *http.Request) error {
	return s.generate(w, r, format(openai.ParseChat, openai.NewWire))
}

// parser decodes a generation request's body into the internal request
// and the wire that answers it.
type parser func(data []byte) (*wire.Request, wire.Wire, error)

// format is the parser of a format whose wire needs nothing of the
// request: parse's request with a fresh wire (a wire keeps one
// response's state).
func format[W wire.Wire](parse func([]byte) (*wire.Request, error), fresh func() W) parser {
	return func(data []byte) (*wire.Request, wire.Wire, error) {
		req, err := parse(data)
		return req, fresh(), err
	}
}

// generate serves one generation request, chat or legacy completion
// (completions.go), Responses or Messages: parse decodes the body into
// the common request.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, parse parser) (err error) {
	received := s.clock.Now()
	started := false
	defer func() {
		if err != nil && !started {
			s.countRejected()
		}
	}()
	setRevisionHeader(w, s.running())
	if err := s.inferenceAllowed(); err != nil {
		return err
	}
	// The body was read by the body middleware (body.go); it is decoded
	// and checked before the request takes a stream slot.
	data, err := requestBody(r)
	if err != nil {
		return err
	}
	req, wr, err := parse(data)
	if err != nil {
		return err
	}
	j := &job{Request: req, wire: wr}
	if err := s.checkModel(req.Model); err != nil {
		return err
	}
	if err := wire.ValidateSampling(req, nil, s.model.Model.Config.Vocab); err != nil {
		return err
	}
	if err := s.checkContentSize(req); err != nil {
		return err
	}
	if j.adapter, err = s.requestAdapter(req); err != nil {
		return err
	}

	setRevisionHeader(w, j.adapter)
	release, err := s.admit()
	if err != nil {
		return err
	}
	defer release()

	tokStart := s.clock.Now()
	prompt, err := s.promptIDs(req)
	if err != nil {
		return err
	}
	releaseBody(r) // the prompt is encoded: its bytes leave the in-flight budget
	tokEnd := s.clock.Now()
	if j.grammar, err = s.planGrammar(req, s.promptThinks(prompt)); err != nil {
		return err
	}
	return s.run(w, r, j, prompt, received, tokStart, tokEnd, &started)
}

// run submits the request's choices to the engine and serves them. The
// prompt is the same for every choice: the first choice's prefill fills
// the prefix cache, whose blocks the others share (engine/prefix.go waits
// for a prefix being prefilled in the same step).
func (s *Server) run(w http.ResponseWriter, r *http.Request, req *job, prompt []int,
	received, tokStart, tokEnd time.Time, started *bool) error {
	p := s.newReply(w, r, req)
	n := max(req.Agent.N, 1)
	xs := make([]*exchange, 0, n)
	streams := make([]generation, 0, n)
	defer p.cancel()
	ids := make([]uint64, n)
	cs := make([]*choiceConstraint, n)
	for i := range n {
		// The request's identity is reserved before submission, which may
		// be refused (no request starts then), so that the engine names it
		// in the blockers of the tokens its prefill delays; the stall
		// spans of those requests link to its chat span. A refusal of any
		// choice refuses the request (the deferred cancel ends the others).
		ids[i] = s.tel.NewRequestID()
		genCtx, cancel := context.WithCancel(r.Context())
		p.cancels = append(p.cancels, cancel)
		cs[i] = s.newConstraint(req)
		stream, err := s.submit(genCtx, req, prompt, tokEnd, ids[i], i, cs[i])
		if err != nil {
			return err
		}
		streams = append(streams, stream)
	}
	*started = true
	thinks := req.Agent.ToolsOffered() && s.promptThinks(prompt)
	op := telemetry.OperationChat
	if req.Legacy {
		op = telemetry.OperationTextCompletion
	}
	for i := range n {
		_, treq := s.tel.StartRequest(r.Context(), telemetry.RequestInfo{Model: s.modelID, Received: received, Stream: req.Stream, ID: ids[i], Operation: op, API: apiNames[req.API]})
		treq.Phase(latency.PhaseTokenization, tokStart, tokEnd)
		if n > 1 {
			treq.Choice(i)
		}
		x := s.newExchange(p, req, treq, i, p.cancels[i], received, len(prompt))
		x.constr = cs[i]
		if rg := req.grammar; rg != nil {
			treq.Grammar(telemetry.GrammarInfo{Kind: rg.kind, Start: rg.start, End: rg.end, CacheHit: rg.cacheHit})
		}
		if req.Agent.ToolsOffered() {
			x.Agent = &wire.AgentOut{Parser: toolcall.NewParser(s.family, req.Agent.ToolcallTools(), toolcall.Options{Thinking: thinks})}
		}
		xs = append(xs, x)
	}
	return p.run(xs, streams)
}

// checkModel answers 404 for a model this server does not serve.
func (s *Server) checkModel(model string) error {
	if model == s.modelID {
		return nil
	}
	return &wire.Error{Status: http.StatusNotFound, Type: wire.TypeInvalidRequest, Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist; this server serves %q (GET /v1/models)", wire.Clip(model), s.modelID)}
}

// admit refuses a chat request while the server drains or when the
// max-streams limit is reached; release frees the stream's place.
func (s *Server) admit() (release func(), err error) {
	if s.stopping.Load() {
		return nil, errStopping
	}
	if s.streams == nil {
		return func() {}, nil
	}
	select {
	case s.streams <- struct{}{}:
		return func() { <-s.streams }, nil
	default:
		return nil, &wire.Error{Status: http.StatusTooManyRequests, Type: wire.TypeRateLimit, Code: "rate_limit_exceeded",
			Message: "too many requests in flight; retry later", RetryAfter: s.cfg.RetryAfter}
	}
}

// submit hands the encoded prompt of choice to the engine.
func (s *Server) submit(ctx context.Context, req *job, prompt []int, submitted time.Time, id uint64, choice int, c *choiceConstraint) (generation, error) {
	sm := wire.SamplingParams(req.Request)
	if sm.HasSeed {
		sm.Seed += uint64(choice) // n seeded choices differ, and repeat
	}
	var constraint engine.Constraint
	if c != nil {
		constraint = c
	}
	stream, err := s.gen.Submit(ctx, engine.Request{
		Constraint:  constraint,
		Prompt:      prompt,
		MaxTokens:   s.maxTokens(req.Request, len(prompt)),
		Sampling:    sm,
		StopIDs:     s.stopIDs,
		Submitted:   submitted,
		ID:          id,
		Adapter:     engineAdapter(req.adapter),
		Logprobs:    req.Agent.Logprobs,
		TopLogprobs: req.Agent.TopLogprobs,
	})
	if err != nil {
		if errors.Is(err, engine.ErrInvalidRequest) {
			return nil, wire.Invalid("", "invalid_value", "the request cannot be generated: %v", err)
		}
		if errors.Is(err, engine.ErrTooLong) {
			return nil, s.contextExceeded(req.Request, len(prompt), err)
		}
		return nil, fmt.Errorf("submit: %w", err)
	}
	return stream, nil
}

// wantMetadata applies the opt-in rules (docs/latency-guide.md#asking-for-timing-on-a-request): true adds terminal metadata, false
// removes it, absent or null follows the server default.
func (s *Server) wantMetadata(req *wire.Request) bool {
	if req.IncludePerformance != nil {
		return *req.IncludePerformance
	}
	return s.cfg.PerformanceMetadata
}

// maxTokens is the request's limit or, when absent, the rest of the
// context (the engine caps it by the context either way).
func (s *Server) maxTokens(req *wire.Request, promptLen int) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return max(s.model.Model.Config.SeqLen-promptLen, 1)
}
