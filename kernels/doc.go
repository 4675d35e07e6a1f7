// Package kernels holds the compute primitives of the engine: matrix-vector
// and batched matrix-matrix products over weights stored as F32, F16, BF16,
// Q8_0, the legacy Q4_0/Q4_1/Q5_0/Q5_1 and the K-quants Q2_K..Q6_K (ggml's
// block layouts, kept as stored: products read the quantized blocks and
// DequantRow decodes one row exactly as ggml does),
// RMSNorm, rotary embeddings (RoPE and the precomputed RopeTable), softmax,
// SiLU/SwiGLU, Dot and Axpy, and the persistent worker Pool that spreads one
// product over all cores.
//
// On amd64 CPUs with AVX2, FMA and F16C (detected once at start-up through
// golang.org/x/sys/cpu) the F32, F16 and Q8_0 products, Dot and Axpy run
// hand-written Plan 9 assembly (kernels_amd64.s): four weight rows are
// streamed once against two activation rows at a time, so a batched decode
// step reads every weight from memory once for all its rows; Q8_0 blocks are
// dequantized in registers. Everywhere else, and for the other types on
// every CPU, the pure-Go products run (kernels_other.go, dot_legacy.go,
// dot_kquant.go), and the tests compare the two.
//
// Concurrency: a Pool owns its n-1 worker goroutines from NewPool until
// Close; each waits on its own channel for a preallocated job, so a product
// costs no allocation and no goroutine start, and idle workers are parked,
// never spinning. A product submitted through a Pool runs on the caller's
// goroutine plus the workers and returns when every part is done; a Pool
// runs one product at a time (concurrent callers are serialized by a mutex;
// the engine's actor is its only caller in practice). Close stops and waits
// for the workers, is idempotent, and a Pool used after Close runs products
// on the caller alone. The element-wise functions are plain,
// single-goroutine and allocation free.
//
// Products check their slice lengths and panic like an out-of-range index
// on a mismatch: the assembly trusts the bounds it is given.
package kernels
