// Package llama is the Llama-family decoder: configuration, weights, the
// batched forward pass with a per-slot KV cache, and the loaders for the
// llama2.c checkpoint format, GGUF and the embedded default model.
package llama
