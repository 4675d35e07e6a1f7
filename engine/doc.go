// Package engine runs generation: the batching actor, the only goroutine
// that touches model state, with its admission queue, chunked prefill,
// batched decode steps, sampling and delivery of timing records into
// per-request channels, plus the device-ownership lock that maintenance
// takes with writer priority.
//
// Goroutines: Engine.Start starts the actor goroutine; Engine.Shutdown stops
// admission, ends in-flight requests and waits for the actor. Submit and
// Snapshot are safe from any goroutine. The engine knows nothing of HTTP or
// OpenTelemetry: it emits plain Token records (timing.go).
package engine
