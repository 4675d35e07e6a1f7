// Package gguf reads and writes GGUF v3 files: the header, typed metadata
// (including arrays such as tokenizer vocabularies) and tensor descriptors,
// with tensor data served from a read-only memory map.
package gguf
