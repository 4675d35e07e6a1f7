package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/kiln-ai/kiln/kernels"
)

// buildInfo is what kiln version reports.
type buildInfo struct {
	Version  string // -ldflags main.version, else the module version
	Revision string // VCS revision, "+dirty" when modified; unstamped when the build had no VCS stamping
	Time     string // VCS commit time
	Go       string
	Platform string
	Kernels  string
}

// unstamped is the revision of a binary Go did not stamp, with how to get
// one: go run never stamps, and GOFLAGS=-buildvcs=false turns it off.
const unstamped = "unknown (not stamped: go run and -buildvcs=false leave it out; go build -buildvcs=true ./cmd/kiln records it)"

// readBuildInfo gathers the build's identity from runtime/debug.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Revision: unstamped, Time: "unknown",
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Kernels: kernelPath()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.Version == "dev" && bi.Main.Version != "" {
		b.Version = bi.Main.Version // "(devel)" for a build inside the module
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && b.Revision != unstamped {
		b.Revision += "+dirty"
	}
	return b
}

// kernelPath names the compute kernels this process runs, as the kernels
// package chose them at start-up, and the CPU features it detected.
func kernelPath() string {
	feats := kernels.CPUFeatures()
	if feats == "" {
		feats = "none"
	}
	return fmt.Sprintf("%s (CPU features: %s)", kernels.Path(), feats)
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" {
		return usageError{fmt.Errorf("version takes no arguments, got %q", args)}
	}
	b := readBuildInfo()
	_, err := fmt.Fprintf(stdout, "kiln %s\nrevision: %s\ntime: %s\ngo: %s %s\nkernels: %s\n",
		b.Version, b.Revision, b.Time, b.Go, b.Platform, b.Kernels)
	return err
}
