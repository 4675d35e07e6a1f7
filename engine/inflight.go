package engine

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// request is the actor's record of one submitted request. Fields below the
// line are touched only by the actor once the request left the queue.
type request struct {
	prompt    []int
	stopIDs   []int
	maxGen    int // MaxTokens capped by the context
	reserve   int // KV positions reserved: len(prompt) + maxGen
	submitted time.Time
	id        uint64  // Request.ID, reported in other tokens' blockers
	adapter   Adapter // Request.Adapter: admitted only while it is the loaded one
	sampler   *sampling.Sampler
	constr    Constraint         // Request.Constraint, nil for none
	logprobs  *sampling.Logprobs // nil unless Request.Logprobs
	lastLP    float32            // the latest token's log probability (with logprobs)
	lastTop   []sampling.TokenLogprob
	stream    *Stream
	cancelled atomic.Bool
	unwatch   func() bool // stops the context watch

	barrierMark PhaseSnapshot // the barrier tracker when the request was enqueued
	barrierObs  MaintTimes    // barrier time that overlapped its wait for admission

	state      state // changed only by moveTo
	slot       int   // -1 when none; set while state.holdsSlot()
	fed        int   // positions written into the KV cache (or reused from the prefix cache)
	looked     bool  // the prefix cache was looked up (lookUp)
	last       int   // the latest sampled token, fed by the next decode step
	generated  int
	mark       counters
	queueWait  time.Duration // actor queue, charged to the first token
	lastReady  time.Time     // the previous token's Ready (zero before the first)
	pending    Token         // a token the channel had no room for
	hasPending bool
	blocked    time.Time // when the channel was first found full for pending
}

// moveTo changes r's state. An illegal move is a bug in the actor: it
// panics, and the actor's recovery ends every request with FinishError.
func (r *request) moveTo(s state) {
	next, err := transition(r.state, s)
	if err != nil {
		panic(err)
	}
	r.state = next
}

// decodable reports whether r takes a row in the next decode step: it is
// decoding and its previous token left for the channel.
func (r *request) decodable() bool { return r.state == stateDecoding && !r.hasPending }

// final reports whether the pending (latest) token ends the request, and
// why.
func (r *request) final() (FinishReason, bool) {
	switch {
	case slices.Contains(r.stopIDs, r.last):
		return FinishStop, true
	case r.generated >= r.maxGen:
		return FinishLength, true
	}
	return "", false
}
