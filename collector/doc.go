// Package collector is the root of Kiln's OpenTelemetry Collector module:
// connector/kilnlatencyconnector turns Kiln traces into the same latency
// metrics as the in-process span processor, calling the main module's
// telemetry derivation, and cmd/otelcol-kiln is a Collector distribution
// with it. It is a separate Go module so that the Collector's dependencies
// never reach the server binary.
package collector
