// Package gguf reads and writes GGUF files (version 3, and version 2 which
// has the same layout): the header, typed metadata (including arrays such as
// tokenizer vocabularies) and tensor descriptors, with tensor data served
// from a read-only memory map.
//
// Open maps a file and Parse reads one held in memory; both copy the
// metadata out and validate the whole structure up front, so every
// malformed input is an error wrapping ErrFormat, never a panic, and no
// count or length read from the file can allocate more than a small
// multiple of the file's size. TensorData returns slices into the map,
// bounds-checked against the file and the tensor type's size
// (ErrUnsupportedTensorType when that size is unknown).
//
// Writer produces valid files, for tests and tools that build models.
//
// The package starts no goroutines. A File is safe for concurrent reads;
// Close unmaps it and must not race with users of its tensor data.
package gguf
