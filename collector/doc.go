// Package collector will hold the OpenTelemetry Collector connector that
// turns Kiln traces into the same latency metrics as the in-process span
// processor, calling the main module's telemetry/latency core. It is a
// separate Go module so that the Collector's dependencies never reach the
// server binary.
package collector
