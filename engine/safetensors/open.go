package safetensors

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/internal/mmap"
)

// Open memory-maps the file at path read-only and parses its header.
// Tensor data is served from the map until Close; nothing of it is read
// into the heap.
func Open(path string) (*File, error) {
	data, unmap, err := mmap.Map(path, 8, ErrFormat)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	f, err := parse(data, unmap)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	f.mapped = true
	return f, nil
}
