// Package safetensors reads Hugging Face .safetensors files: an 8-byte
// little-endian header length, a JSON header naming every tensor's dtype,
// shape and byte range, then the raw little-endian tensor data.
//
// Open memory-maps the file; tensor data is served from the map until
// Close, so loading a model does not copy its weights onto the heap. Parse
// checks the whole header against the file before anything is served:
// every tensor's byte range lies inside the data section, matches its dtype
// and shape, and overlaps no other tensor. Every error about a file's
// contents wraps ErrFormat. The package starts no goroutines.
package safetensors
