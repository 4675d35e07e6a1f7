package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kiln-ai/kiln/kernels"
)

// kernelPath is the kernel path the configuration reports: the pool's as
// cmd resolved it, or the CPU's default.
func (c Config) kernelPath() string {
	if c.KernelPath != "" {
		return c.KernelPath
	}
	return kernels.Path()
}

// validateKernelPath refuses a kernel path this CPU has no kernels for.
func (c Config) validateKernelPath() error {
	if c.KernelPath == "" || slices.Contains(kernels.Paths(), c.KernelPath) {
		return nil
	}
	return fmt.Errorf("kernel_path: %q is not one of this CPU's paths (%s)", c.KernelPath, strings.Join(kernels.Paths(), ", "))
}

// kernelsJSON is the kernels object of /v1/config and the debug state:
// the path the products run, every path this CPU could run, and the CPU
// features the dispatch looked at.
func (c Config) kernelsJSON() map[string]any {
	return map[string]any{
		"path":         c.kernelPath(),
		"paths":        kernels.Paths(),
		"cpu_features": kernels.CPUFeatures(),
	}
}
