// Package promseries flattens Prometheus expositions into comparable
// samples, so that tests can check that two hosts (the server's /metrics
// and the kilnlatency connector's exporter) expose the same numbers: every
// bucket count, counter and sum of the chosen families, series by series.
package promseries
