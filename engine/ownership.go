package engine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Ownership is the device-ownership lock: a readers-writer lock with writer
// priority. The actor holds it shared while it computes; maintenance (KV
// resize, trim, adapter changes, training steps) takes it exclusively. Once
// a writer waits, new shared acquisitions wait behind it, so maintenance is
// never starved by a busy actor; the actor's wait is measured and reported
// as gpu_lock_wait. Every wait honours its context.
//
// A writer that releases while readers, and no other writer, wait hands
// the readers a turn: they enter before any writer does, even one that asks
// again at once, so a writer that runs unit after unit (a training job's
// optimizer steps) lets the actor run one forward invocation between two of
// them. Writers already queued at the release keep their priority.
type Ownership struct {
	mu             sync.Mutex
	readers        int
	writer         bool
	writersWaiting int
	readersWaiting int
	readerTurn     bool          // readers that waited at a writer's release enter before the next writer
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
	return o.lock(ctx, nil, nil)
}

// lock is Lock that also gives up, holding nothing, when dead closes
// (returning errAbandoned) or when check, called each time tick fires,
// returns an error (returning it): the health checks of a waiting writer.
// Nil channels never fire.
func (o *Ownership) lock(ctx context.Context, dead <-chan struct{}, w *watch) error {
	var tick <-chan time.Time
	if w != nil {
		tick = w.tick
	}
	o.mu.Lock()
	o.writersWaiting++
	for o.writer || o.readers > 0 || o.readerTurn {
		ch := o.changed
		o.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = ctx.Err()
		case <-dead:
			err = errAbandoned
		case <-tick:
			err = w.check()
		}
		o.mu.Lock()
		if err != nil {
			o.writersWaiting--
			o.broadcast() // readers held back by this writer may go
			o.mu.Unlock()
			return err
		}
	}
	o.writersWaiting--
	o.writer = true
	o.mu.Unlock()
	return nil
}

// watch is a waiting writer's periodic health check.
type watch struct {
	tick  <-chan time.Time
	check func() error
}

// Unlock releases exclusive ownership.
func (o *Ownership) Unlock() {
	o.mu.Lock()
	if !o.writer {
		o.mu.Unlock()
		panic("engine: Ownership.Unlock of an unlocked lock")
	}
	o.writer = false
	o.readerTurn = o.readersWaiting > 0 && o.writersWaiting == 0
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

// tryLock takes exclusive ownership if nobody holds it.
func (o *Ownership) tryLock() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.writer || o.readers > 0 || o.readerTurn {
		return false
	}
	o.writer = true
	return true
}

// tryRLock takes shared ownership if no writer holds or waits for it.
func (o *Ownership) tryRLock() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.writer || o.writersWaiting > 0 {
		return false
	}
	o.readers++
	return true
}

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
	for o.writer || (o.writersWaiting > 0 && !o.readerTurn) {
		ch := o.changed
		o.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			o.mu.Lock()
			o.readersWaiting--
			o.endReaderTurn()
			o.mu.Unlock()
			return true, errAbandoned
		}
		o.mu.Lock()
	}
	o.readersWaiting--
	o.readers++
	o.endReaderTurn()
	o.mu.Unlock()
	return true, nil
}

// endReaderTurn ends the readers' turn once none of them still waits; o.mu
// is held. A writer waiting on the turn is woken (it then waits for the
// readers that entered to release).
func (o *Ownership) endReaderTurn() {
	if o.readerTurn && o.readersWaiting == 0 {
		o.readerTurn = false
		o.broadcast()
	}
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
