//go:build unix

package safetensors

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Open memory-maps the file at path read-only and parses its header.
// Tensor data is served from the map until Close; nothing of it is read
// into the heap.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer fh.Close() // the map outlives the descriptor
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	size := st.Size()
	if size < 8 {
		return nil, fmt.Errorf("safetensors: %s: %d bytes is too short: %w", path, size, ErrFormat)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("safetensors: %s: %d bytes do not fit in the address space", path, size)
	}
	data, err := unix.Mmap(int(fh.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("safetensors: mmap %s: %w", path, err)
	}
	f, err := parse(data, func() error { return unix.Munmap(data) })
	if err != nil {
		_ = unix.Munmap(data)
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return f, nil
}
