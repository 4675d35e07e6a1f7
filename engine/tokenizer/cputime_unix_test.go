//go:build unix

package tokenizer

import "syscall"

// processCPU is the CPU time (user+system, ns) this process has used. On a
// shared machine it is a steadier measure than wall time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
