//go:build race

package testshared

// Race reports whether the test binary runs under the race detector, whose
// instrumentation makes the pure-Go kernels tens of times slower: tests that
// sweep every reference model then check a subset, and scripts/test runs the
// full sweep again without the detector.
const Race = true
