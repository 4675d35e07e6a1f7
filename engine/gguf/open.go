package gguf

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/internal/mmap"
)

// Open memory-maps the file at path read-only and parses it. Tensor data is
// served from the map until Close.
func Open(path string) (*File, error) {
	data, unmap, err := mmap.Map(path, int64(len(magic)), ErrFormat)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := parse(data, unmap)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return f, nil
}
