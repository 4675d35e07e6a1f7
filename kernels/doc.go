// Package kernels holds the compute primitives of the engine: matrix-vector
// and batched matrix-matrix products over f32, F16-stored and Q8_0 weights,
// RMSNorm, rotary embeddings, softmax and SiLU, and the persistent worker
// Pool that spreads one product over all cores.
//
// Concurrency: a Pool owns its worker goroutines from NewPool until Close.
// A product submitted through a Pool runs on the caller's goroutine plus the
// workers and returns when every part is done; a Pool runs one product at a
// time (the engine's actor is its only caller). The element-wise functions
// are plain, single-goroutine and allocation free.
package kernels
