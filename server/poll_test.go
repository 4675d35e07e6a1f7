package server

import (
	"testing"
	"time"
)

const (
	pollEvery = time.Millisecond
	// pollLimit bounds a wait for something that must happen; it is a
	// failure's bound, never a duration the test expects (a training job
	// under the race detector takes about a minute).
	pollLimit = 2 * time.Minute
)

// waitFor polls cond (the server's, the engine's or an exporter's own
// state) until it holds, failing the test after pollLimit. Every test that
// waits for something to happen waits here, rather than sleeping for a
// guessed duration; under fake time (withFakeTime) the polls are fake too.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %v", what, pollLimit)
		}
		time.Sleep(pollEvery)
	}
}
