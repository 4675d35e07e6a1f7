//go:build kiln_faultinject

package main

import (
	"sync/atomic"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/sampling"
)

// Seeds that inject faults in a binary built with -tags kiln_faultinject
// and run with KILN_FAULT_INJECT=1 (the kill-switch tests): a request with
// seedSampleFault panics in its sampler (a request fault); one with
// seedEngineFault makes the next forward pass panic (an engine fault).
const (
	seedSampleFault = 666
	seedEngineFault = 667
)

// faultOptions returns the engine's fault hooks when KILN_FAULT_INJECT=1.
func faultOptions(getenv func(string) string) []engine.Option {
	if getenv("KILN_FAULT_INJECT") != "1" {
		return nil
	}
	var armed atomic.Bool
	return []engine.Option{engine.WithFaultHooks(engine.FaultHooks{
		Sample: func(s sampling.Params) {
			switch {
			case !s.HasSeed:
			case s.Seed == seedSampleFault:
				panic("injected sampler fault")
			case s.Seed == seedEngineFault:
				armed.Store(true)
			}
		},
		Forward: func() {
			if armed.Load() {
				panic("injected forward-pass fault")
			}
		},
	})}
}
