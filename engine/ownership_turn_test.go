package engine

import (
	"context"
	"testing"
	"time"
)

// TestOwnershipReaderTurn: a writer that releases and at once asks again
// (a training job's next step) waits until the reader that was waiting at
// the release has entered and released: the actor runs one forward
// invocation between two writer units.
func TestOwnershipReaderTurn(t *testing.T) {
	ctx := context.Background()
	o := NewOwnership()
	if err := o.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{}, 1)
	go func() {
		if err := o.RLock(ctx); err != nil {
			t.Error(err)
			return
		}
		ran <- struct{}{}
		time.Sleep(10 * time.Millisecond) // a forward invocation
		o.RUnlock()
	}()
	waitFor(t, func() bool { r, _ := o.Waiting(); return r == 1 })
	o.Unlock()
	if err := o.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	default:
		t.Fatal("the writer re-entered before the waiting reader had its turn")
	}

	o.Unlock()
}
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond) // polling the lock's waiters
	}
}
