// Package timing is the vocabulary the engine and telemetry share: the
// plain records the engine emits (a token's Phases with its backend Slots,
// its Blockers, the EngineSnapshot of its runtime state) and the
// saturating time arithmetic both sides use (Elapsed, Ms).
//
// It exists because neither side may import the other (docs/architecture.md#layers: the
// engine knows nothing of telemetry, telemetry imports nothing of ours but
// schemas), yet both must agree on these types to the bit. Defining them
// once here, and re-exporting them as aliases (engine.Phases,
// latency.GapPhases, engine.Snapshot, telemetry.EngineStats, the way os
// re-exports io/fs), leaves nothing to translate and nothing that can
// drift: a token's record passes from the engine to the latency core
// without conversion. Callers outside this module's engine and telemetry
// use the re-exported names.
//
// It imports nothing of ours, holds no state and starts no goroutine.
package timing
