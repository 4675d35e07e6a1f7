package engine

import (
	"context"
	"errors"
	"sync"
)

// Ownership is the device-ownership lock: a readers-writer lock with writer
// priority. The actor holds it shared while it computes; maintenance (KV
// resize, trim, adapter changes, training steps) takes it exclusively. Once
// a writer waits, new shared acquisitions wait behind it, so maintenance is
// never starved by a busy actor; the actor's wait is measured and reported
// as gpu_lock_wait. Every wait honours its context.
type Ownership struct {
	mu             sync.Mutex
	readers        int
	writer         bool
	writersWaiting int
	readersWaiting int
	changed        chan struct{} // closed and replaced on every release
}

// NewOwnership returns an unheld lock.
func NewOwnership() *Ownership {
	return &Ownership{changed: make(chan struct{})}
}

// broadcast wakes every waiter; o.mu is held. Without waiters it does
// nothing, so the actor's uncontended RLock/RUnlock allocates nothing.
func (o *Ownership) broadcast() {
	if o.readersWaiting == 0 && o.writersWaiting == 0 {
		return
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

// Lock takes exclusive ownership, waiting for shared holders to release.
// It returns ctx's error if ctx ends first, holding nothing.
func (o *Ownership) Lock(ctx context.Context) error {
	o.mu.Lock()
	o.writersWaiting++
	for o.writer || o.readers > 0 {
		ch := o.changed
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			o.mu.Lock()
			o.writersWaiting--
			o.broadcast() // readers held back by this writer may go
			o.mu.Unlock()
			return ctx.Err()
		}
		o.mu.Lock()
	}
	o.writersWaiting--
	o.writer = true
	o.mu.Unlock()
	return nil
}

// Unlock releases exclusive ownership.
func (o *Ownership) Unlock() {
	o.mu.Lock()
	if !o.writer {
		o.mu.Unlock()
		panic("engine: Ownership.Unlock of an unlocked lock")
	}
	o.writer = false
	o.broadcast()
	o.mu.Unlock()
}

// RLock takes shared ownership, waiting while a writer holds or waits for
// the lock. It returns ctx's error if ctx ends first, holding nothing.
func (o *Ownership) RLock(ctx context.Context) error {
	if _, err := o.rlock(ctx.Done()); err != nil {
		return ctx.Err()
	}
	return nil
}

// errAbandoned reports a shared acquisition given up because done closed.
var errAbandoned = errors.New("engine: ownership wait abandoned")

// rlock is RLock over a bare channel (the actor's stop channel). waited
// reports whether it had to wait behind a writer.
func (o *Ownership) rlock(done <-chan struct{}) (waited bool, err error) {
	o.mu.Lock()
	if !o.writer && o.writersWaiting == 0 {
		o.readers++
		o.mu.Unlock()
		return false, nil
	}
	o.readersWaiting++
	for o.writer || o.writersWaiting > 0 {
		ch := o.changed
		o.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			o.mu.Lock()
			o.readersWaiting--
			o.mu.Unlock()
			return true, errAbandoned
		}
		o.mu.Lock()
	}
	o.readersWaiting--
	o.readers++
	o.mu.Unlock()
	return true, nil
}

// RUnlock releases shared ownership.
func (o *Ownership) RUnlock() {
	o.mu.Lock()
	if o.readers == 0 {
		o.mu.Unlock()
		panic("engine: Ownership.RUnlock of an unlocked lock")
	}
	o.readers--
	if o.readers == 0 {
		o.broadcast()
	}
	o.mu.Unlock()
}

// Waiting reports how many shared and exclusive acquisitions are waiting.
func (o *Ownership) Waiting() (shared, exclusive int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.readersWaiting, o.writersWaiting
}
