package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestTurns: a writer asking again for the same operation waits for the
// actor's next compute, several computes before it wakes are harmless, an
// idle actor or another operation makes it wait for nothing, and the wait
// is bounded.
func TestTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tu turns
		busy := func() bool { return true }
		tu.released(7)
		done := make(chan struct{})
		go func() { tu.await(context.Background(), 7, busy); close(done) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("await returned before the actor computed")
		default:
		}
		tu.computed()
		tu.computed() // a second one before the waiter ran: the channel is gone, nothing to close
		<-done

		tu.released(7)
		t0 := time.Now()
		tu.await(context.Background(), 8, busy) // another operation
		tu.await(context.Background(), 7, func() bool { return false })
		if d := time.Since(t0); d != 0 {
			t.Errorf("another operation or an idle actor waited %v", d)
		}
		tu.await(context.Background(), 7, busy) // nobody computes
		if d := time.Since(t0); d != maxTurnWait {
			t.Errorf("an unanswered wait took %v, want the bound %v", d, maxTurnWait)
		}
	})
}
