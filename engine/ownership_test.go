package engine_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
)

// TestOwnershipWriterPriority: a waiting writer holds back new readers, gets
// the lock when the current readers leave, and the held-back readers go
// when it unlocks.
func TestOwnershipWriterPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := engine.NewOwnership()
		ctx := t.Context()
		if err := o.RLock(ctx); err != nil {
			t.Fatal(err)
		}
		var events []string
		writerIn := make(chan struct{})
		go func() {
			if err := o.Lock(ctx); err != nil {
				t.Error(err)
				return
			}
			events = append(events, "writer")
			close(writerIn)
			time.Sleep(time.Millisecond)
			o.Unlock()
		}()
		synctest.Wait()
		readerDone := make(chan struct{})
		go func() {
			defer close(readerDone)
			if err := o.RLock(ctx); err != nil {
				t.Error(err)
				return
			}
			events = append(events, "late reader")
			o.RUnlock()
		}()
		synctest.Wait()
		if shared, exclusive := o.Waiting(); shared != 1 || exclusive != 1 {
			t.Fatalf("waiting: %d shared, %d exclusive; want 1, 1", shared, exclusive)
		}
		events = append(events, "first reader leaves")
		o.RUnlock()
		<-writerIn
		<-readerDone
		if d := cmp.Diff([]string{"first reader leaves", "writer", "late reader"}, events); d != "" {
			t.Errorf("order (-want +got):\n%s", d)
		}
	})
}

// TestOwnershipContext: a writer giving up releases the readers it held
// back; waits honour their contexts.
func TestOwnershipContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := engine.NewOwnership()
		if err := o.RLock(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		readerIn := make(chan error, 1)
		go func() {
			time.Sleep(time.Millisecond) // behind the writer
			readerIn <- o.RLock(t.Context())
		}()
		if err := o.Lock(ctx); err != context.DeadlineExceeded {
			t.Errorf("Lock = %v, want DeadlineExceeded", err)
		}
		if err := <-readerIn; err != nil {
			t.Errorf("reader after the writer gave up: %v", err)
		}
		o.RUnlock()
		o.RUnlock()

		if err := o.Lock(t.Context()); err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer rcancel()
		if err := o.RLock(rctx); err != context.DeadlineExceeded {
			t.Errorf("RLock under a writer = %v, want DeadlineExceeded", err)
		}
		o.Unlock()
		if shared, exclusive := o.Waiting(); shared != 0 || exclusive != 0 {
			t.Errorf("waiters left: %d shared, %d exclusive", shared, exclusive)
		}
	})
}
