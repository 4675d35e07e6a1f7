package engine

import "github.com/kiln-ai/kiln/engine/llama"

// Backend is the model state the actor drives: a batched forward pass over
// rows of several sequences ("slots"), each with its own KV cache. Only the
// actor goroutine calls it. *llama.State satisfies it.
type Backend interface {
	// Forward runs one batched step. Rows may mix prefill chunks
	// (consecutive positions of one slot) and decode rows of different
	// slots; for the k-th row with Logits set it fills logits[k].
	Forward(rows []llama.Row, logits [][]float32)
	Slots() int     // sequences the KV cache holds at once
	SeqLen() int    // positions per sequence (the context length)
	VocabSize() int // length of one logits row
	Release(slot int)
}

var _ Backend = (*llama.State)(nil)

var _ Reclaimer = (*llama.State)(nil)
