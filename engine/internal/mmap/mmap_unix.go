//go:build unix

package mmap

import (
	"fmt"
	"os"
	"unsafe"

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

// Release tells the OS that the process will not read b, a slice of a
// mapping from Map, for a while: the whole pages inside it leave the
// process's resident set (madvise MADV_DONTNEED) and come back from the
// page cache, unchanged, if b is read again. It is advice; an error
// changes nothing and is returned for the record.
func Release(b []byte) error {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if len(b) == 0 || hi <= lo {
		return nil
	}
	return unix.Madvise(b[lo-start:hi-start], unix.MADV_DONTNEED)
}
