// Package schemas embeds the JSON Schemas (draft 2020-12) of Kiln's
// inference objects (kiln-inference-v1.schema.json: chat request, response,
// stream chunks, terminal chunk, token timing event, performance metadata)
// and observability objects (kiln-observability-v1.schema.json: request
// summary, phases, reason counts, decode stats, recent-request records,
// health, error and debug-disabled bodies), plus the trace contract
// (trace-contract.md). Response objects are closed: additionalProperties
// false and every key required, except the few keys whose presence the
// contract makes conditional (their descriptions say when).
//
// Validator compiles both documents for tests and tools. The package has no
// goroutines and no mutable state.
package schemas
