//go:build !race

package testshared

// Race reports whether the test binary runs under the race detector (see
// race.go).
const Race = false
