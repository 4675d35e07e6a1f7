package server

import (
	"fmt"
	"slices"
	"strings"
)

// validateKernelPath refuses a kernel path the CPU has no kernels for
// (KernelPaths, as cmd resolved them).
func (c Config) validateKernelPath() error {
	if c.KernelPath == "" || len(c.KernelPaths) == 0 || slices.Contains(c.KernelPaths, c.KernelPath) {
		return nil
	}
	return fmt.Errorf("kernel_path: %q is not one of this CPU's paths (%s)", c.KernelPath, strings.Join(c.KernelPaths, ", "))
}

// kernelsJSON is the kernels object of /v1/config and the debug state:
// the path the products run, every path this CPU could run, and the CPU
// features the dispatch looked at, as cmd resolved them from the compute
// pool (the server knows no kernels of its own).
func (c Config) kernelsJSON() map[string]any {
	return map[string]any{
		"path":         c.KernelPath,
		"paths":        append([]string{}, c.KernelPaths...),
		"cpu_features": c.CPUFeatures,
	}
}
