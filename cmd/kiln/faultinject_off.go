//go:build !kiln_faultinject

package main

import "github.com/kiln-ai/kiln/engine"

// faultOptions injects no faults: only a binary built with the
// kiln_faultinject tag (faultinject.go, for the kill-switch tests) can.
func faultOptions(func(string) string) []engine.Option { return nil }
