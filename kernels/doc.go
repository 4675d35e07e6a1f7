// Package kernels holds the compute primitives of the engine: matrix-vector
// and batched matrix-matrix products over weights stored as F32, F16, BF16,
// Q8_0, the legacy Q4_0/Q4_1/Q5_0/Q5_1 and the K-quants Q2_K..Q6_K (ggml's
// block layouts, kept as stored: products read the quantized blocks and
// DequantRow decodes one row exactly as ggml does), RMSNorm, rotary
// embeddings, softmax, SiLU/SwiGLU, Dot and Axpy, and the persistent
// worker Pool that spreads one product over all cores.
//
// # Paths
//
// The CPU's vector features are detected once at start-up
// (golang.org/x/sys/cpu) and select the fastest path, Path(): "amx" on
// amd64 CPUs with AMX-INT8 beside AVX-512 (and Linux's leave to use the
// tiles), "avx512" on those with AVX-512 F, BW, VL and VNNI, "avxvnni" on
// those with AVX-VNNI and no AVX-512 (packed Q8_0 products, the VEX form
// of VPDPBUSD), "avx2" on those with AVX2, FMA and F16C, "generic" (pure
// Go) everywhere else and with the purego build tag. Paths lists what
// this CPU runs; NewPoolOpts forces a lower one (tests run every path
// against the pure-Go reference). CPUFeatures reports the features seen.
//
// Quantized weights multiply by integer dot products, as ggml does: a
// Pool quantizes a product's activation rows once, into scratch it owns
// (ggml's q8_0 blocks for Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, q8_K blocks
// for the K-quants Q2_K..Q6_K; actquant.go), and each weight block meets
// them in int8/int32 arithmetic with one float scale per block (dot_int*.go
// in Go; in AVX2 assembly, VPMADDUBSW and VPMADDWD, for every type:
// intdot_amd64.s, intdot_k_amd64.s, and the two-row tiles of
// intdot_x2_amd64.s and intdot_kx2_amd64.s, reading the row-major blocks
// as stored). Four weight rows per call
// meet two activation rows at a time (one where a type has no two-row
// tile, and for a batch's odd row), so a weight is read from memory once
// per product and unpacked once per two rows; a row's result is
// bit-identical whichever rows share its call. On the avx512 path,
// Prepare (prepare.go; the model loaders call it) gives each Q8_0, Q4_0,
// Q5_0, Q4_1, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K matrix a packed copy, sixteen
// rows to a group, one per 32-bit lane, which the integer products read
// instead: one VPDPBUSD of four broadcast activation bytes sums sixteen
// rows' products in place, sixteen weight rows against up to eight
// activation rows a call (intpack_amd64.h, intpack_amd64.s,
// intpack_nib_amd64.s, intpack_k_amd64.s: the K-quants' sub-block scales
// applied exactly in integers); the avxvnni path reads the Q8_0 ones
// eight rows at a time (intpack_vnni_amd64.s), the amx path reads them
// sixteen activation rows at a time through AMX tiles
// (intpack_amx_amd64.s: the packed block is a tile's B operand as it
// lies, and the sums then take the avx512 kernels' steps, so the two
// paths give the same bits), and the K-quants'
// activations quantize in AVX-512 assembly (actquant_k_amd64.s). The
// integer products move results by the activation rounding, as
// llama.cpp's do (logits by a few hundredths); Options.FloatActivations
// keeps the exact products with float32 activations, the reference. F16,
// BF16 and F32 always read float32 activations.
//
// The float products: on the avx2 path the F32, F16 and float-activation
// Q8_0 products, Dot and Axpy run hand-written Plan 9 assembly
// (kernels_amd64.s, f32x3_amd64.s): four weight rows are streamed once
// against three (F32) or two activation rows at a time; Q8_0 blocks are
// dequantized in registers; a one-row F32 product reads a row at a time
// (dotAVX), the others four rows at a time, prefetching the next four
// (prefetch_amd64.h). Batching moves an avx2 F32 result by float32
// rounding: a batch of one sums in another order than the tiles. On the
// avx512 path Prepare gives F32, F16 and BF16 matrices a packed copy too
// (sixteen rows to a group, a column's sixteen weights side by side),
// which ZMM kernels read as outer products (matmul_float_packed_amd64.s): one load of
// a column and one broadcast activation make one FMA into the sixteen
// rows' outputs, two groups against up to twelve activation rows a call
// (four groups against a batch of up to three), 24 accumulators, no
// horizontal sums; each output sums its columns in order, one FMA each,
// in every kernel. Matrices without a packed copy run ZMM kernels over
// the rows (matmul_float_tiles_amd64.s): a 4x6 register tile (four weight rows
// against six activation rows, 24 accumulators of sixteen lanes; 4x4 to
// 4x1 for the rest of a batch, 4x1 for a batch of one) over column chunks
// of 1024, prefetching the next block of weights, and a one-row kernel
// for a last group of fewer than four rows, which all give each (weight
// row, activation row) pair one accumulator, the same lane order, the
// same final reduction and the same chunking. Either way a row's result
// is bit-identical whether it is multiplied alone or in any batch
// (TestFloatBatchInvisible). AttnScores4 and
// AttnValues4 (attn.go) are a prefill chunk's attention, four query rows
// per pass over the cache (on AVX-512 CPUs attnz_amd64.s: four keys a
// pass, their sixteen dots reduced together, and the weighted values of
// up to 64 columns a pass); AttnScores1 and AttnValues1 a decode row's,
// one call per head. The
// integer products quantize their activations with quantizeQ8ActAVX
// (actquant_amd64.s), bit-identical to the Go form.
// Elsewhere the pure-Go products run (kernels_other.go, dot_legacy.go,
// dot_kquant.go), and the tests compare the two. //
// # Types
//
// types.go holds one row of traits a storage type (ggml's type_traits):
// its name, block elements and bytes, the activation blocks its integer
// products read (actQ8, actQ8K, or none), its dequantizer, its pure-Go
// reference products (float32 and quantized activations), its avx512
// packer, the layout of its packed groups and the reference product of a
// packed lane. Matrix.Validate, DequantRow, the generic and integer
// products, the activation quantizer, Prepare and the packed reference
// all read that row; engine/gguf's own table is checked against it
// (TestTypesAgreeWithKernels). The assembly kernels of a type are called
// through switches that internal/kerngen generates from its spec.go
// (matmul_*_calls_amd64.go), since a func value would make their
// arguments escape.
//
// # Adding a type
//
// A new quantized type touches:
//   - types.go: its DType constant (ggml's number) and its traits row;
//   - its implementation files: dequant*.go (the block dequantizer),
//     dot_*.go (the reference row products), pack_*.go and
//     pack_reference.go (if it is packed), and its assembly (.s);
//   - internal/kerngen/spec.go: a row in each kernel family it has
//     assembly for; then run go generate ./kernels/ and commit the
//     regenerated matmul_*_calls_amd64.go (TestGeneratedCallsCurrent
//     fails on a stale one).
//
// The tests that range over Types() (dequantization against gguf-py's,
// every path against the generic reference, packing, fuzzing) then cover
// it, engine/llama accepts it in GGUF files, and engine/gguf must already
// size it as ggml does.
//
// # Concurrency
//
// A Pool owns its n-1 worker goroutines from NewPool until
// Close; each waits on its own channel for a preallocated job, so a product
// costs no allocation and no goroutine start; an idle worker polls for its
// next part for spinFor (50 µs, timed by the clock) and then parks. (Under
// testing/synctest's fake clock the poll would never time out, so tests
// there use a pool of one: no worker goroutines.) A product submitted through a Pool runs on the caller's
// goroutine plus the workers and returns when every part is done; a Pool
// runs one product at a time (concurrent callers are serialized by a mutex;
// the engine's actor is its only caller in practice). Close stops and waits
// for the workers, is idempotent, and a Pool used after Close runs products
// on the caller alone. The element-wise functions are plain,
// single-goroutine and allocation free.
//
// # Bounds
//
// Products check their slice lengths and panic like an out-of-range index
// on a mismatch: the assembly trusts the bounds it is given.
package kernels
