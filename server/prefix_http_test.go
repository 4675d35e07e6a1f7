package server

import (
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
)

// The harness backend is an engine.PrefixBackend over the real model
// state, as kiln serve's *llama.State is: without these the engine saw no
// prefix cache behind the wrapper and every harness ran with it off.
var _ engine.PrefixBackend = (*hookBackend)(nil)

func (h *hookBackend) prefix() engine.PrefixBackend { return h.Backend.(engine.PrefixBackend) }

// SetPrefixCache implements engine.PrefixBackend.
func (h *hookBackend) SetPrefixCache(on bool) { h.prefix().SetPrefixCache(on) }

// Reuse implements engine.PrefixBackend.
func (h *hookBackend) Reuse(slot int, key llama.PrefixKey, prompt []int) engine.PrefixUse {
	return h.prefix().Reuse(slot, key, prompt)
}

// SetPrefixLimit implements engine.PrefixBackend.
func (h *hookBackend) SetPrefixLimit(limit int64, reason engine.PrefixEvict) int64 {
	return h.prefix().SetPrefixLimit(limit, reason)
}

// SupersedePrefixes implements engine.PrefixBackend.
func (h *hookBackend) SupersedePrefixes(adapter, revision string) int64 {
	return h.prefix().SupersedePrefixes(adapter, revision)
}

// PrefixStats implements engine.PrefixBackend.
func (h *hookBackend) PrefixStats() engine.PrefixCacheStats { return h.prefix().PrefixStats() }
