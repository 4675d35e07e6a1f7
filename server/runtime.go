package server

import (
	"os"
	"runtime"
)

// runtimeBlock is /health's view of the process: a leak of goroutines or
// descriptors (a handler that never returns, a connection never closed)
// shows as a count that only grows.
type runtimeBlock struct {
	Goroutines int `json:"goroutines"`
	// OpenFDs is the process's open file descriptors (sockets included),
	// -1 where the platform does not list them (/proc/self/fd).
	OpenFDs int `json:"open_fds"`
}

func readRuntime() runtimeBlock {
	return runtimeBlock{Goroutines: runtime.NumGoroutine(), OpenFDs: openFDs()}
}

// openFDs counts the entries of /proc/self/fd, less the one the listing
// itself opens; -1 when it cannot be read.
func openFDs() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return -1
	}
	return len(names) - 1
}
