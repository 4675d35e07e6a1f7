//go:build unix

package mmap

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Map maps the whole file at path read-only. The mapping outlives the file
// descriptor; release it with unmap, after which data must not be used.
// A file shorter than minSize bytes is refused with an error that wraps
// tooShort.
func Map(path string, minSize int64, tooShort error) (data []byte, unmap func() error, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close() // the map outlives the descriptor
	st, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size < minSize {
		return nil, nil, fmt.Errorf("%s: %d bytes is too short: %w", path, size, tooShort)
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%s: %d bytes do not fit in the address space", path, size)
	}
	if size == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	data, err = unix.Mmap(int(fh.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
