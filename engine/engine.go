package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/internal/timing"
)

// Engine is the batching actor over one Backend. Construct it with New,
// Start it, Submit requests from any goroutine, Shutdown to stop.
type Engine struct {
	backend Backend
	cfg     Config
	clock   Clock
	own     *Ownership
	seqLen  int
	// kvMax bounds a resize's tokens (0: the backend cannot resize);
	// batchLimit is the configured batch limit below the start-up slots
	// (0: the batch limit follows the slots).
	kvMax, batchLimit int

	tracker    *PhaseTracker // maintenance phases under ownership (trim, training)
	barrier    *PhaseTracker // mutations at the actor barrier (resize, adapter)
	wedgeAfter time.Duration
	vocab      int
	swapper    AdapterSwapper // nil: requests name no adapter (adapter.go)
	obs        timing.OperationObserver
	opSeq      atomic.Uint64 // the latest operation identity
	turns      turns         // the actor's forward invocation between two slices of one operation (turn.go)

	mu        sync.Mutex
	queue     []*request  // waiting for admission, FIFO
	mutations []*mutation // exclusive mutations waiting for the barrier, FIFO
	trims     []*trimReq  // Trim calls waiting for the actor
	trimOp    *Operation  // their operation, while any waits
	loaded    Adapter     // the adapter the backend runs with (nil: base); written by swap mutations
	started   bool
	stopped   bool

	wake  chan struct{} // capacity 1: work arrived or a request was cancelled
	stop  chan struct{} // closed by Shutdown
	done  chan struct{} // closed when the actor has exited
	alive atomic.Bool

	failed chan struct{}         // closed when the engine failed (fault.go)
	fault  atomic.Pointer[Fault] // why it failed
	hooks  FaultHooks            // test-only fault injection

	snapMu sync.Mutex
	snap   timing.EngineSnapshot

	a actor // owned by the actor goroutine
}

// New builds an engine over b. cfg's zero fields take their defaults.
func New(b Backend, cfg Config, opts ...Option) (*Engine, error) {
	if b == nil {
		return nil, errors.New("engine: nil backend")
	}
	rc, err := cfg.resolve(b)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		backend: b,
		cfg:     rc,
		clock:   realClock{},
		own:     NewOwnership(),
		seqLen:  b.SeqLen(),
		vocab:   b.VocabSize(),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		failed:  make(chan struct{}),

		wedgeAfter: DefaultWedgeTimeout,
		obs:        timing.NopObserver{},
	}
	for _, o := range opts {
		o(e)
	}
	e.kvMax = kvMaxTokens(b, rc)
	if cfg.MaxBatch != 0 && cfg.MaxBatch < b.Slots() {
		e.batchLimit = cfg.MaxBatch
	}
	e.tracker = NewPhaseTracker(e.clock)
	e.barrier = NewPhaseTracker(e.clock)
	e.a.init(e)
	e.initPrefixCache()
	e.snap.KVBudget, e.snap.KVSlots, e.snap.BatchLimit = rc.KVBudget, b.Slots(), rc.MaxBatch
	return e, nil
}

// Config returns the resolved configuration (defaults filled in).
func (e *Engine) Config() Config { return e.cfg }

// Ownership returns the device-ownership lock. Maintenance and tests take it
// exclusively with Lock; the actor takes it shared around every forward
// pass.
func (e *Engine) Ownership() *Ownership { return e.own }

// Start starts the actor goroutine and returns. It fails if the engine was
// already started or shut down.
func (e *Engine) Start(_ context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.stopped:
		return ErrStopped
	case e.started:
		return errors.New("engine: already started")
	}
	e.started = true
	e.alive.Store(true)
	go e.a.run()
	return nil
}

// Shutdown stops admission (Submit returns ErrStopped), ends every queued
// and in-flight request at once with FinishError and Err ErrStopped, and
// waits for the actor to exit or ctx to end. A server that wants in-flight
// requests to complete drains them before calling it. Shutdown is
// idempotent and safe without Start.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	if !e.stopped {
		e.stopped = true
		close(e.stop)
	}
	started := e.started
	e.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("engine: shutdown: %w", ctx.Err())
	}
}

// Ready reports whether the engine can make progress: started, not stopped,
// and its actor alive.
func (e *Engine) Ready() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started && !e.stopped && e.alive.Load()
}

// Snapshot returns the runtime state (see Snapshot).
func (e *Engine) Snapshot() timing.EngineSnapshot {
	e.snapMu.Lock()
	s := e.snap
	e.snapMu.Unlock()
	e.mu.Lock()
	s.QueueDepth = len(e.queue)
	s.Ready = e.started && !e.stopped && e.alive.Load()
	s.TrimsPending = len(e.trims)
	s.MutationsPending = len(e.mutations)
	e.mu.Unlock()
	s.BarrierResize = e.barrier.Active(PhaseResize)
	s.BarrierAdapter = e.barrier.Active(PhaseAdapter)
	return s
}

// Submit queues r for generation. It fails with ErrInvalidRequest,
// ErrTooLong (the prompt leaves no room to generate), ErrQueueFull (the
// admission queue is at QueueDepth: the server's 429) or ErrStopped. When
// ctx ends (the client went away) the request is cancelled: its slot and KV
// memory are freed within one actor cycle and its stream ends with
// FinishCancelled.
func (e *Engine) Submit(ctx context.Context, r Request) (*Stream, error) {
	if err := e.check(&r); err != nil {
		return nil, err
	}
	if r.Adapter != nil && e.swapper == nil {
		return nil, ErrNoAdapters
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("engine: submit: %w", err)
	}
	q := &request{
		prompt:  slices.Clone(r.Prompt),
		stopIDs: slices.Clone(r.StopIDs),
		maxGen:  min(r.MaxTokens, e.seqLen-len(r.Prompt)),
		id:      r.ID,
		adapter: r.Adapter,
		sampler: sampling.New(r.Sampling),
		constr:  r.Constraint,
		slot:    -1,
		stream:  &Stream{ch: make(chan Token, e.cfg.DeliveryBuffer)},
	}
	q.sampler.SetPrompt(q.prompt)
	if r.Logprobs {
		q.logprobs = sampling.NewLogprobs(r.TopLogprobs)
	}
	q.reserve = len(q.prompt) + q.maxGen
	q.submitted = r.Submitted
	if q.submitted.IsZero() {
		q.submitted = e.clock.Now()
	}
	q.barrierMark = e.barrier.Snapshot()
	q.stream.res.PromptTokens = len(q.prompt)
	q.stream.res.Submitted = q.submitted
	q.unwatch = context.AfterFunc(ctx, func() {
		q.cancelled.Store(true)
		e.poke()
	})

	st := q.stream // the actor owns q once it is queued
	e.mu.Lock()
	var err error
	switch {
	case !e.started || e.stopped || !e.alive.Load():
		err = ErrStopped
	case len(e.queue) >= e.cfg.QueueDepth:
		err = ErrQueueFull
	default:
		e.queue = append(e.queue, q)
	}
	e.mu.Unlock()
	if err != nil {
		q.unwatch()
		return nil, err
	}
	e.poke()
	return st, nil
}

// check validates r against the model.
func (e *Engine) check(r *Request) error {
	switch {
	case len(r.Prompt) == 0:
		return fmt.Errorf("%w: empty prompt", ErrInvalidRequest)
	case r.MaxTokens < 1:
		return fmt.Errorf("%w: max tokens %d must be >= 1", ErrInvalidRequest, r.MaxTokens)
	case len(r.Prompt) >= e.seqLen:
		return fmt.Errorf("%w: %d prompt tokens, context %d", ErrTooLong, len(r.Prompt), e.seqLen)
	}
	for i, id := range r.Prompt {
		if id < 0 || id >= e.vocab {
			return fmt.Errorf("%w: prompt token %d is %d, outside the vocabulary of %d", ErrInvalidRequest, i, id, e.vocab)
		}
	}
	if err := r.Sampling.Validate(e.vocab); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return nil
}

// poke wakes the actor if it waits for work.
func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
