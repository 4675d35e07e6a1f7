package timing

import "time"

// Elapsed returns end - start, saturated at 0: the length of an interval
// whose instants come from one monotonic clock but may be clamped or
// stamped out of order by a few nanoseconds. It is the only saturating
// difference of the module (engine, telemetry and server use it).
func Elapsed(start, end time.Time) time.Duration { return max(end.Sub(start), 0) }

// Ms converts a duration to float milliseconds, the unit of every
// duration in the latency contract's JSON and span attributes.
func Ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Later is the later of two instants, and Earlier the earlier: clamping
// an instant into an interval.
func Later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// Earlier: see Later.
func Earlier(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
}
