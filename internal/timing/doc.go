// Package timing is the vocabulary the engine and telemetry share: the
// plain records the engine emits (a token's Phases with its backend phases,
// its Blockers, the EngineSnapshot of its runtime state) and the
// saturating time arithmetic both sides use (Elapsed, Ms).
//
// It exists because neither side may import the other (docs/architecture.md#layers: the
// engine knows nothing of telemetry, telemetry imports nothing of ours but
// schemas), yet both must agree on these types to the bit. Defining them
// once here, under one name each (timing.Phases and timing.EngineSnapshot
// everywhere, in the engine, telemetry, the server and the Collector
// connector), leaves nothing to translate and nothing that can drift: a
// token's record passes from the engine to the latency core without
// conversion.
//
// It imports nothing of ours, holds no state and starts no goroutine.
package timing
