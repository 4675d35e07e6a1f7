//go:build unix

package gguf

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Open memory-maps the file at path read-only and parses it. Tensor data is
// served from the map until Close.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fh.Close() // the map outlives the descriptor
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	size := st.Size()
	if size < int64(len(magic)) {
		return nil, fmt.Errorf("gguf: %s: %d bytes is too short for a GGUF file: %w", path, size, ErrFormat)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("gguf: %s: %d bytes do not fit in the address space", path, size)
	}
	data, err := unix.Mmap(int(fh.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	f, err := parse(data, func() error { return unix.Munmap(data) })
	if err != nil {
		_ = unix.Munmap(data)
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return f, nil
}
