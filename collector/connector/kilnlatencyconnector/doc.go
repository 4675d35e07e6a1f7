// Package kilnlatencyconnector is the `kilnlatency` OpenTelemetry Collector
// connector: a traces-to-metrics connector that reads the chat spans and
// `kiln.stall` spans Kiln exports (schemas/trace-contract.md) and derives
// the kiln_* request families of docs/latency-guide.md#prometheus from them, through the
// same code the server's in-process span processor runs
// (telemetry.ObservationsFromAttributes, Observations.Records,
// telemetry.GapFromMs and telemetry.IsStall): one derivation, two hosts.
//
// What it counts, per span of Kiln's instrumentation scope:
//
//   - a `chat {model}` span: kiln_requests_total{status},
//     kiln_request_duration_seconds, kiln_request_ttft_seconds,
//     kiln_request_latency_phase_seconds{phase}, and, from its retained
//     gaps (kiln.latency.gaps_ms), kiln_token_itl_seconds and
//     kiln_tokens_generated_total;
//   - a `text_completion {model}` span: the ITL and token families only,
//     as the in-process processor counts them;
//   - a `kiln.stall` span: kiln_token_stalls_total{reason}, one per span
//     (the server emits one per gap of at least the fixed 250 ms).
//
// Every other span (other services, Kiln's phase children, kiln.trim) is
// left alone: it is not counted and not changed. A Kiln span whose
// attributes are missing or do not have the contract's types is counted
// in kiln_connector_dropped_spans_total{reason} and nothing else; gap
// samples a request did not retain (more than 8192 gaps) are counted in
// kiln_connector_unretained_gaps_total, since their ITL observations are
// not in the span. kiln_active_requests is not derived: a span arrives
// only once its request has ended.
//
// The families are cumulative and aggregated over every replica that
// sends spans; they are emitted every flush_interval and at shutdown.
package kilnlatencyconnector
