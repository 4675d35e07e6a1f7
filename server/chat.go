package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// chat serves POST /v1/chat/completions.
//
// The path of one token: the engine delivers an engine.Token on the
// request's channel; the handler stamps handler_received, decodes its text
// (a special token, or bytes held back for an incomplete UTF-8 sequence or a
// possible stop sequence, give empty text), writes its content chunk and
// flushes, stamps body_enqueued, records the token with telemetry and, when
// the request said include_performance: true, writes the returned
// kiln.token_timing event as its own data line. Every emitted token gets
// exactly one content chunk (its content may be "") followed by at most one
// timing event, so the events pair with chunks one to one.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) (err error) {
	received := s.clock.Now()
	started := false
	defer func() {
		if err != nil && !started {
			s.countRejected()
		}
	}()
	if s.stopping.Load() {
		return errStopping
	}
	if s.streams != nil {
		select {
		case s.streams <- struct{}{}:
			defer func() { <-s.streams }()
		default:
			return &Error{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limit_exceeded",
				Message: "too many requests in flight; retry later", RetryAfter: s.cfg.RetryAfter}
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	req, err := decodeChatRequest(r.Body)
	if err != nil {
		return err
	}
	if req.Model != s.modelID {
		return &Error{Status: http.StatusNotFound, Type: typeInvalidRequest, Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q does not exist; this server serves %q (GET /v1/models)", req.Model, s.modelID)}
	}

	tokStart := s.clock.Now()
	prompt, err := s.encodePrompt(req.Messages)
	if err != nil {
		return err
	}
	tokEnd := s.clock.Now()

	// The request's identity is reserved before submission, which may be
	// refused (no request starts then), so that the engine names it in the
	// blockers of the tokens its prefill delays; the stall spans of those
	// requests link to its chat span.
	id := s.tel.NewRequestID()
	genCtx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stream, err := s.gen.Submit(genCtx, engine.Request{
		Prompt:    prompt,
		MaxTokens: s.maxTokens(req, len(prompt)),
		Sampling:  sampling(req),
		StopIDs:   s.stopIDs,
		Submitted: tokEnd,
		ID:        id,
	})
	if err != nil {
		if errors.Is(err, engine.ErrInvalidRequest) {
			return invalid("", "invalid_value", "the request cannot be generated: %v", err)
		}
		return fmt.Errorf("submit: %w", err)
	}
	started = true

	_, treq := s.tel.StartRequest(r.Context(), telemetry.RequestInfo{Model: s.modelID, Received: received, Stream: req.Stream, ID: id})
	treq.Phase(latency.PhaseTokenization, tokStart, tokEnd)

	x := &exchange{
		s: s, req: req, w: w, r: r, treq: treq, cancel: cancel,
		received:    received,
		id:          newID(),
		created:     time.Now().Unix(),
		promptLen:   len(prompt),
		metadata:    s.wantMetadata(req),
		events:      req.IncludePerformance != nil && *req.IncludePerformance,
		stop:        stopMatcher{stops: req.Stop},
		dec:         s.tok.NewDecoder(),
		captureText: s.cfg.RecentRequestText,
	}
	return x.run(stream)
}

// wantMetadata applies SPEC section 2: true adds terminal metadata, false
// removes it, absent or null follows the server default.
func (s *Server) wantMetadata(req *chatRequest) bool {
	if req.IncludePerformance != nil {
		return *req.IncludePerformance
	}
	return s.cfg.PerformanceMetadata
}

func sampling(req *chatRequest) engine.Sampling {
	sm := engine.Sampling{Temperature: 1, TopK: req.TopK}
	if req.Temperature != nil {
		sm.Temperature = float32(*req.Temperature)
	}
	if req.TopP != nil {
		sm.TopP = float32(*req.TopP)
	}
	if req.Seed != nil {
		sm.Seed, sm.HasSeed = uint64(*req.Seed), true
	}
	return sm
}

// maxTokens is the request's limit or, when absent, the rest of the
// context (the engine caps it by the context either way).
func (s *Server) maxTokens(req *chatRequest, promptLen int) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return max(s.model.Model.Config.SeqLen-promptLen, 1)
}

// encodePrompt renders the chat template and tokenizes the result,
// recognising the template's special tokens and prepending BOS when the
// tokenizer asks for it and the template did not already.
func (s *Server) encodePrompt(msgs []chatMessage) ([]int, error) {
	cm := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	opt := chat.Options{AddGenerationPrompt: true}
	if id := s.tok.BOS(); id >= 0 {
		opt.BOS = s.tok.Token(id)
	}
	if id := s.tok.EOS(); id >= 0 {
		opt.EOS = s.tok.Token(id)
	}
	text, err := s.tmpl.Render(cm, opt)
	if err != nil {
		return nil, invalid("messages", "invalid_value", "the messages cannot be rendered with the model's chat template: %v", err)
	}
	ids := s.tok.EncodeSpecial(text)
	if bos := s.tok.BOS(); s.tok.AddBOS() && bos >= 0 && (len(ids) == 0 || ids[0] != bos) {
		ids = append([]int{bos}, ids...)
	}
	if len(ids) == 0 {
		return nil, invalid("messages", "invalid_value", "the messages produce an empty prompt")
	}
	return ids, nil
}

// exchange is the state of one chat request from submission to the end of
// its response. Only the handler goroutine touches it.
type exchange struct {
	s      *Server
	req    *chatRequest
	w      http.ResponseWriter
	r      *http.Request
	treq   *telemetry.Request
	cancel context.CancelFunc
	sse    *sseWriter

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
	firstReady time.Time
	lastReady  time.Time
	stopHit    bool // a stop sequence ended the completion
	roleSent   bool // the first chunk (with the role) was written
	writeErr   error

	blockers [engine.MaxBlockers]latency.Blocker // the current token's, reused
}

func (x *exchange) run(stream generation) error {
	if x.req.Stream {
		x.sse = newSSEWriter(x.w)
		if err := x.sse.start(); err != nil {
			x.writeErr = err
			x.cancel()
		}
	}
	for tok := range stream.Tokens() {
		if x.stopHit || x.writeErr != nil {
			continue // drain what the engine had already delivered
		}
		x.token(tok)
	}
	if x.writeErr == nil && !x.stopHit {
		// The tail held back for a possible stop sequence or an
		// incomplete UTF-8 sequence is part of the completion.
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
	res := stream.Result()
	finish, outcome := x.finish(res)
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
	})
	x.s.countOutcome(outcome)
	x.s.recent.add(x.record(finish, ended, sum))

	if outcome == telemetry.OutcomeClientDisconnect {
		return nil // nobody to answer
	}
	perf := performance{}
	if x.metadata {
		perf = x.performance(finish, ended, sum)
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

// token handles one engine token: text, content chunk, telemetry, event.
func (x *exchange) token(tok engine.Token) {
	recv := x.s.clock.Now()
	text := ""
	if !x.s.tok.IsSpecial(tok.ID) {
		text = x.dec.Next(tok.ID)
	}
	out, hit := x.stop.push(text)
	x.text.WriteString(out)
	if x.completion == 0 {
		x.firstReady = tok.Ready
	}
	x.lastReady = tok.Ready
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
		Phases:            tok.Phases, // engine.Phases is latency.GapPhases (internal/timing)
		Blockers:          x.tokenBlockers(&tok),
	})
	if x.sse != nil && x.events {
		x.write(ev.AppendJSON)
	}
	if hit {
		x.stopHit = true
		x.cancel() // free the engine slot at once
	}
}

// tokenBlockers converts the token's blockers into the exchange's reused
// array (no allocation per token); the slice is valid until the next
// token.
func (x *exchange) tokenBlockers(tok *engine.Token) []latency.Blocker {
	n := min(max(tok.NumBlockers, 0), len(x.blockers))
	for i, b := range tok.Blockers[:n] {
		x.blockers[i] = latency.Blocker{Kind: blockerKind(b.Kind), Request: b.Request, Start: b.Start, End: b.End}
	}
	return x.blockers[:n]
}

// blockerKind maps the engine's blocker kinds to the latency core's.
func blockerKind(k engine.BlockerKind) latency.BlockerKind {
	switch k {
	case engine.BlockerPrefill:
		return latency.BlockerPrefill
	case engine.BlockerLockWait:
		return latency.BlockerLockWait
	}
	return 0
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

// newID returns an OpenAI-style completion id.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// appendChunk appends one chat.completion.chunk carrying content. The
// first chunk also carries the assistant role, as OpenAI's do.
func (x *exchange) appendChunk(b []byte, content string) []byte {
	b = x.appendChunkHead(b)
	b = append(b, `"choices":[{"index":0,"delta":{`...)
	if !x.roleSent {
		x.roleSent = true
		b = append(b, `"role":"assistant",`...)
	}
	b = append(b, `"content":`...)
	b = appendJSONString(b, content)
	b = append(b, `},"logprobs":null,"finish_reason":null}]`...)
	return x.appendChunkTail(b)
}

func (x *exchange) appendChunkHead(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, x.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = appendInt(b, x.created)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, x.s.modelID)
	return append(b, `,"system_fingerprint":null,`...)
}

// appendChunkTail closes a chunk; with include_usage every chunk carries
// "usage":null except the final usage chunk, as OpenAI's do.
func (x *exchange) appendChunkTail(b []byte) []byte {
	if x.req.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	return append(b, '}')
}

// endStream writes the terminal chunk (finish_reason, and metadata when it
// applies), the usage chunk when asked, and [DONE].
func (x *exchange) endStream(finish string, perf performance) error {
	x.write(func(b []byte) []byte {
		b = x.appendChunkHead(b)
		b = append(b, `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
		b = appendJSONString(b, finish)
		b = append(b, `}]`...)
		if x.req.IncludeUsage {
			b = append(b, `,"usage":null`...)
		}
		if perf.ok {
			b = append(b, `,"metadata":{"performance":`...)
			b = perf.appendJSON(b)
			b = append(b, '}')
		}
		return append(b, '}')
	})
	if x.req.IncludeUsage {
		x.write(func(b []byte) []byte {
			b = x.appendChunkHead(b)
			b = append(b, `"choices":[],"usage":`...)
			b = x.appendUsage(b)
			return append(b, '}')
		})
	}
	if x.writeErr == nil {
		if err := x.sse.done(); err != nil {
			x.writeErr = err
		}
	}
	return nil // a failed write means the client left; nothing to report to it
}

func (x *exchange) appendUsage(b []byte) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, int64(x.promptLen))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(x.completion))
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, int64(x.promptLen+x.completion))
	return append(b, '}')
}

// writeCompletion writes the non-streaming chat.completion.
func (x *exchange) writeCompletion(finish string, perf performance) error {
	b := make([]byte, 0, 512+x.text.Len())
	b = append(b, `{"id":`...)
	b = appendJSONString(b, x.id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = appendInt(b, x.created)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, x.s.modelID)
	b = append(b, `,"system_fingerprint":null,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	b = appendJSONString(b, x.text.String())
	b = append(b, `,"refusal":null},"logprobs":null,"finish_reason":`...)
	b = appendJSONString(b, finish)
	b = append(b, `}],"usage":`...)
	b = x.appendUsage(b)
	if perf.ok {
		b = append(b, `,"metadata":{"performance":`...)
		b = perf.appendJSON(b)
		b = append(b, '}')
	}
	b = append(b, "}\n"...)
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	_, err := x.w.Write(b)
	if err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}

// performance is the metadata.performance object of SPEC section 2.
type performance struct {
	ok                 bool
	latency            latency.Summary
	promptTokens       int
	completionTokens   int
	ttftMs             latency.NullFloat
	totalLatencyMs     float64
	decodeTokensPerSec latency.NullFloat
	finishReason       string
	adapterUsed        string
}

func (x *exchange) performance(finish string, ended time.Time, sum latency.Summary) performance {
	p := performance{
		ok:               true,
		latency:          sum,
		promptTokens:     x.promptLen,
		completionTokens: x.completion,
		ttftMs:           sum.TTFTMs,
		totalLatencyMs:   msSince(x.received, ended),
		finishReason:     finish,
		adapterUsed:      "base",
	}
	// Decode throughput over the gaps: tokens after the first per second
	// between the first and the last token; null without a gap.
	if d := x.lastReady.Sub(x.firstReady); x.completion > 1 && d > 0 {
		p.decodeTokensPerSec = latency.Float(float64(x.completion-1) / d.Seconds())
	}
	return p
}

func msSince(a, b time.Time) float64 { return float64(max(b.Sub(a), 0)) / 1e6 }

func (p *performance) appendJSON(b []byte) []byte {
	b = append(b, `{"latency":`...)
	b = p.latency.AppendJSON(b)
	b = append(b, `,"prompt_tokens":`...)
	b = appendInt(b, int64(p.promptTokens))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(p.completionTokens))
	b = append(b, `,"ttft_ms":`...)
	b = appendNullFloat(b, p.ttftMs)
	b = append(b, `,"total_latency_ms":`...)
	b = appendFloat(b, p.totalLatencyMs)
	b = append(b, `,"decode_tokens_per_sec":`...)
	b = appendNullFloat(b, p.decodeTokensPerSec)
	b = append(b, `,"finish_reason":`...)
	b = appendJSONString(b, p.finishReason)
	b = append(b, `,"adapter_used":`...)
	b = appendJSONString(b, p.adapterUsed)
	return append(b, '}')
}

func appendNullFloat(b []byte, f latency.NullFloat) []byte {
	if !f.Valid {
		return append(b, "null"...)
	}
	return appendFloat(b, f.V)
}
