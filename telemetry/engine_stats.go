package telemetry

import "github.com/kiln-ai/kiln/internal/timing"

// EngineStats is the engine's runtime state, the very struct the engine
// publishes (engine.Snapshot; both are internal/timing.EngineSnapshot), so
// the function passed to SetEngineSource hands over the engine's snapshot
// unconverted and telemetry still does not import the engine (docs/architecture.md#layers). The kiln_batching_engine_* families read it at collection
// time; engineFamilies says which field feeds which family.
type EngineStats = timing.EngineSnapshot
