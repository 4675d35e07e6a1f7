package enginetest

import (
	"testing"

	"github.com/kiln-ai/kiln/engine/llama"
)

// TinyConfig is the shape of TinyModel: small enough that a test runs
// hundreds of steps in milliseconds, with grouped-query attention.
func TinyConfig() llama.Config {
	return llama.Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 64, SeqLen: 128}
}

// TinyModel returns a random-weight Llama model of TinyConfig, the same for
// the same seed.
func TinyModel(tb testing.TB, seed uint64) *llama.Model {
	tb.Helper()
	m, err := llama.NewRandom(TinyConfig(), seed, true)
	if err != nil {
		tb.Fatalf("enginetest: tiny model: %v", err)
	}
	return m
}
