// Package telemetry turns the timing records of requests into
// OpenTelemetry traces and metrics: the tracer and meter providers, the Kiln
// span processor that derives latency metrics from 100% of requests, views
// with fixed buckets, the Prometheus and OTLP exporters, the trace
// contract names and the logger. The derivation rules live in the pure
// subpackage latency.
package telemetry
