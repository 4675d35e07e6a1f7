// Package mmap maps a model file read-only into memory, so that the loaders
// (GGUF, safetensors) serve weights straight from the page cache: nothing
// is read into the heap, and the pages are shared between processes. On
// platforms without memory maps the file is read into memory instead.
package mmap
