// Package engine runs generation: the batching actor, the only goroutine
// that touches model state, with its admission queue, chunked prefill,
// batched decode steps, sampling and delivery of timing records into
// per-request channels, plus the device-ownership lock that maintenance
// takes with writer priority.
//
// # The cycle
//
// Each actor cycle: end cancelled requests and evict consumers blocked past
// Config.EvictGrace (freeing slot and budget at once); admit
// queued requests FIFO while a slot, Config.MaxBatch and Config.KVBudget
// allow; then, holding the Ownership lock shared, prefill up to
// Config.PrefillChunk prompt tokens in one forward pass and run one batched
// decode step over every active request that is not blocked on delivery;
// sample; hand each new token to its request's bounded channel without
// blocking (a full channel leaves the token pending and the request out of
// decode steps until it drains); finally the optional Config.CycleIdle
// pause.
//
// # Maintenance
//
// docs/maintenance.md sections 2-4 and 7. Writers take the Ownership lock
// exclusively with writer priority (Engine.Exclusive, exclusive.go): a
// writer's phase (training, trim) is open on the engine's PhaseTracker
// (tracker.go) only while it holds the lock, and a waiting writer fails with
// ErrRestartRequired on a stopped or wedged actor. A forward invocation
// that waited snapshots the tracker first and charges the overlap beside
// its gpu_lock_wait, which is measured on every invocation (about 0 on the
// fast path). Mutations of what every sequence depends on (KV resize,
// adapter swap) go through one FIFO to the actor barrier (Engine.Mutate,
// barrier.go): accepted, they pause admission, the batch drains, they run
// in order on the actor, and each queued request is charged the overlap of
// its wait with them (a second tracker). A request may name an Adapter
// (adapter.go, docs/maintenance.md section 5): the actor admits only requests
// of the loaded adapter, so no forward invocation mixes adapters; when the
// head of the FIFO queue needs another one, the actor queues a swap (built
// by the AdapterSwapper) at the barrier, and the requests behind it wait
// in order. Engine.SwapAdapter changes the loaded adapter on demand (the
// server's default). Engine.Trim (trim.go) runs on the
// actor between two forward invocations under exclusive ownership: the
// backend's unused buffers (Reclaimer) and the Go heap go back to the
// operating system. Engine.ResizeKV (resize.go, section 6) is the KV
// resize mutation: a budget of N tokens (KV positions, what admission
// checks) over ceil(N / context) slots, the slot table reallocated on a
// KVResizer backend, admission resuming at the new size.
//
// Each step has its file: admit.go (reap, admit), compute.go (acquire,
// prefillStep, decodeStep, sample, tokensReady), deliver.go (deliver,
// finish, end). A request's progress is one explicit state (state.go):
// queued, admitting, prefilling, decoding, finishing (its slot freed, its
// last token waiting for room), ended; every change goes through one
// transition table that rejects illegal moves.
//
// # Timing
//
// The actor keeps cumulative per-phase counters (admission, prefill,
// decode, cycle idle, response delivery, and the sampling and gpu_lock_wait
// slots), advanced when each non-overlapping segment ends. A token's Phases
// are the counters' progress since its request's previous token (or since
// admission began, plus the actor queue wait, for the first token), so a
// shared step is charged to every request waiting in it, another request's
// prefill chunk appears in the gaps of the requests it delayed, and no phase
// exceeds the interval it describes. The ownership wait and sampling sit
// inside decode.
//
// A token also names what delayed it (Token.Blockers, at most MaxBlockers,
// largest first): the actor keeps a fixed ring of its recent identified
// work segments, one per request with rows in each prefill pass (tagged
// with Request.ID, the caller's opaque identity) and one per ownership wait
// behind a writer, and when a token is ready it copies the largest
// segments lying inside the token's interval, the request's own prefill
// included. This costs no allocation per token. Callers turn the IDs into
// trace links; the engine never interprets them.
//
// # Goroutines
//
// Engine.Start starts the actor goroutine; Engine.Shutdown stops admission,
// ends queued and in-flight requests with FinishError (ErrStopped) and waits
// for the actor. Faults (fault.go): a panic while sampling one request
// ends that request alone with FinishError and a *Fault; a panic anywhere
// else in the actor (the forward pass above all), or a run of request
// faults, ends every request, leaves the engine not Ready and closes
// Engine.Failed, which the process watches to drain and exit non-zero.
// Submit, Snapshot, Ready and Ownership are
// safe from any goroutine; a request's context is watched with
// context.AfterFunc, which only sets a flag and wakes the actor. The engine
// knows nothing of HTTP or OpenTelemetry: it emits plain Token records
// (timing.go).
package engine
