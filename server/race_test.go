//go:build race

package server

// raceEnabled: the race detector makes training tens of times slower, so
// the training walk-throughs skip under it; scripts/test runs them without.
const raceEnabled = true
