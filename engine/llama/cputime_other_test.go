//go:build !unix

package llama

import "time"

// cpuTime is not measured here: the benchmarks' tok/cpu-s reads +Inf.
func cpuTime() time.Duration { return 0 }
