// Package llama is the Llama-family decoder: configuration, weights, the
// batched forward pass with a per-slot KV cache, and the loaders for the
// llama2.c checkpoint format, GGUF and the embedded default model
// (kiln-tiny).
//
// Forward runs a step's rows (decode rows of many slots, prefill chunks of
// consecutive positions) as one product per projection over all rows, each
// weight read once per step; a prefill run's attention goes in blocks of
// four rows per head, one pass over the slot's cache each (attn.go).
//
// A Model is immutable once loaded and may be shared. A State holds the
// mutable side (per-slot KV caches, scratch) and belongs to one goroutine at
// a time, the engine's actor; Forward spreads its products and its attention
// over the kernels.Pool the State was made with and returns when all parts
// are done, so the package starts no goroutine that outlives a call.
// NewRandom fills tensors from short-lived goroutines it joins before
// returning. A Model loaded from GGUF aliases a memory map that Close (or
// Loaded.Close) unmaps.
//
// LoRA adapters (adapter*.go): LoadAdapter reads a PEFT directory or a
// llama.cpp LoRA GGUF for one Model into float32 A and B matrices, checking
// every shape against the model and putting B's Q/K rows in the model's row
// order; InspectAdapter describes one without a model. An Adapter is
// read-only and may be shared by the States of its Model. State.SetAdapter,
// called between Forwards by the State's owner, makes Forward add
// (alpha/r)·B·(A·x) after each targeted projection, for every row, on the
// same pool; without an adapter this costs one nil check per product.
package llama
