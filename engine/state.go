package engine

import "fmt"

// state is where a request is in its life inside the engine. Every change
// goes through transition, which rejects the moves the table below does
// not list: the actor's steps read the state instead of combining flags.
//
//	queued ──> admitting ──> prefilling ──> decoding ──> finishing ──> ended
//	   └─────────┴──────────────┴─────────────┴─────────────────────────^
//
// Whether a request holds a slot follows from its state (admitting,
// prefilling and decoding do); whether it has a token waiting for room in
// its channel (request.hasPending) is orthogonal: a decoding request with a
// pending token sits out decode steps until the token is delivered.
//
// The maintenance barrier (docs/maintenance.md section 4, barrier.go) needs no
// state of its own: while a mutation is accepted, queued requests stay
// queued (admit is skipped) and active ones drain through the states
// above; the mutation runs when no request holds a slot. A queued request
// of another adapter than the loaded one (adapter.go) likewise stays
// queued until its swap ran. Trim (trim.go)
// runs between two forward invocations and parks nobody either.
type state uint8

const (
	stateQueued     state = iota // in the engine's queue (the zero value)
	stateAdmitting               // taken from the queue: slot and KV reserved, admission not yet stamped
	statePrefilling              // holds a slot; prompt positions left to feed
	stateDecoding                // holds a slot; prompt fed, generating one token per decode step
	stateFinishing               // finished (slot freed); its last token waits for room in the channel
	stateEnded                   // stream closed; dropped from the active list by compact
	numStates
)

var stateNames = [numStates]string{"queued", "admitting", "prefilling", "decoding", "finishing", "ended"}

func (s state) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", s)
}

// legal[from][to] lists the allowed transitions. Any state but finishing
// may end at once (cancellation, eviction, an error, shutdown); finishing
// only ends. A request never goes back.
var legal = [numStates][numStates]bool{
	stateQueued:     {stateAdmitting: true, stateEnded: true},
	stateAdmitting:  {statePrefilling: true, stateEnded: true},
	statePrefilling: {stateDecoding: true, stateEnded: true},
	stateDecoding:   {stateFinishing: true, stateEnded: true},
	stateFinishing:  {stateEnded: true},
}

// transition returns to when the move from from is legal, and an error
// naming both otherwise.
func transition(from, to state) (state, error) {
	if from >= numStates || to >= numStates || !legal[from][to] {
		return from, fmt.Errorf("engine: illegal request transition %v -> %v", from, to)
	}
	return to, nil
}

// holdsSlot reports whether a request in s owns a slot and KV positions.
func (s state) holdsSlot() bool {
	return s == stateAdmitting || s == statePrefilling || s == stateDecoding
}
