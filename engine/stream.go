package engine

import "time"

// Stream is the consumer's side of one submitted request.
type Stream struct {
	ch  chan Token
	res Result // written by the actor before ch is closed
}

// Tokens returns the request's bounded token channel. It is closed after
// the last token; a consumer that stops reading for longer than the
// engine's EvictGrace is evicted (Result().Finish == FinishEvicted).
func (s *Stream) Tokens() <-chan Token { return s.ch }

// Result is the request's outcome. It is valid once Tokens() is closed.
func (s *Stream) Result() Result { return s.res }

// Result is how a request ended and the instants of its life in the engine.
type Result struct {
	Finish        FinishReason
	Err           error // set with FinishError (ErrStopped on shutdown)
	PromptTokens  int
	Generated     int       // tokens sampled, delivered or not
	Submitted     time.Time // Request.Submitted, or the Submit instant
	Admitted      time.Time // admission began; zero if never admitted
	AdmissionDone time.Time // the admission pass that admitted it ended; zero if never admitted
	PrefillDone   time.Time // the prompt's last chunk ran; zero if never
	Prefix        PrefixUse // what the prompt reused from the prefix cache
}
