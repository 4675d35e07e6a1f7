// Command otelcol-kiln is an OpenTelemetry Collector distribution built
// with the Collector's Go API: the standard components a Kiln pipeline
// needs plus the kilnlatency connector.
//
//	receivers:  otlp
//	processors: batch
//	connectors: kilnlatency
//	exporters:  prometheus, otlphttp, debug
//
// Build it inside the collector module and run it with a configuration
// file (examples/collector/otelcol-kiln.yaml):
//
//	cd collector && go build ./cmd/otelcol-kiln
//	./otelcol-kiln --config ../examples/collector/otelcol-kiln.yaml
package main
