//go:build !unix

package mmap

import (
	"fmt"
	"os"
)

// Map reads the whole file at path into memory (this platform has no
// memory maps here); unmap does nothing. A file shorter than minSize bytes
// is refused with an error that wraps tooShort.
func Map(path string, minSize int64, tooShort error) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) < minSize {
		return nil, nil, fmt.Errorf("%s: %d bytes is too short: %w", path, len(data), tooShort)
	}
	return data, func() error { return nil }, nil
}

// Release does nothing: the file was read into the heap, whose pages this
// process must keep.
func Release(b []byte) error { return nil }
