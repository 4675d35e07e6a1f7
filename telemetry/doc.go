// Package telemetry turns the timing records of requests into
// OpenTelemetry traces and metrics, following schemas/trace-contract.md. The derivation rules live in the pure subpackage latency;
// this package wires them to OpenTelemetry.
//
// Data flow of one request:
//
//   - StartRequest starts the `chat {model}` span under the incoming
//     context (the otelhttp server span) and registers the request's
//     identity (Request.ID, or one reserved earlier with NewRequestID)
//     with the span's context, for links. The tracer provider's sampler
//     wraps OTEL_TRACES_SAMPLER so that a span it would drop is still
//     recorded (RecordOnly): every request reaches the span processor,
//     only sampled ones reach the exporters.
//   - Request.Token runs the latency core (Tracker.Observe) and hands the
//     token to the Kiln Processor at once (Processor.ObserveToken): token
//     counter, ITL histogram, the fixed 250 ms stall counter, the rolling
//     window. This direct call is the in-process equivalent of a span per
//     gap, which would cost more than the per-token budget; a gap of at
//     least 250 ms also becomes a `kiln.stall` span (reason, gap and
//     candidate durations as attributes), which is what gets exported. It
//     links to the chat spans of the requests whose prefill passes lie
//     inside the gap (the token's Blockers, from the engine), so a trace
//     viewer answers "blocked by what"; lock waits become an attribute
//     and span events.
//   - The identity registry resolves a request id to its chat span's
//     context while the request is in flight and until 256 more requests
//     have ended; it is bounded, mutex-protected, and touched only at
//     request start and end and on a stall.
//   - Request.Phase and Request.End emit the phase spans with their real
//     instants (kiln.tokenization, kiln.actor_queue, kiln.actor_admission,
//     kiln.actor_prefill, kiln.actor_decode)
//     and end the chat span with the summary and the retained gaps as
//     attributes (names.go lists every name). Processor.OnEnd turns those
//     attributes into Observations (ObservationsFromAttributes) and
//     records the request families (TTFT, duration, phases, outcomes,
//     GenAI histograms); OnStart/OnEnd keep the active gauge. A Collector
//     connector derives the same numbers from the exported chat spans by
//     calling the same function.
//
// Metrics go to an own prometheus.Registry (never the global one) through
// the OTel Prometheus exporter; MetricsHandler serves it, OpenMetrics with
// exemplars (trace ids of sampled requests) when asked. Labels come only
// from closed sets (reason, phase, status, gen_ai_operation_name="chat").
//
// Goroutines and lifecycle: New starts nothing of ours. With OTLP export
// configured the SDK's batch span processor owns one goroutine; Shutdown
// (idempotent, honours its context) flushes and stops both providers.
// A Request belongs to its handler goroutine; the Processor and the
// rolling window are safe for concurrent use, and the engine source
// passed to SetEngineSource is called from the scrape goroutine.
//
// Logger returns zerolog JSON on stderr (a console writer when stderr is
// a terminal); an event given a context (Event.Ctx) carries trace_id and
// span_id, and WithTrace binds them to a logger.
package telemetry
