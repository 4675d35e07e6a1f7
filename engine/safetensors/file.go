package safetensors

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/kiln-ai/kiln/engine/internal/mmap"
)

// File is a parsed safetensors file whose tensor data is served from memory
// it does not copy (a memory map when it comes from Open).
type File struct {
	Tensors  []Tensor          // in file order
	Metadata map[string]string // the header's __metadata__, nil when absent

	data   []byte // the data section
	byName map[string]int

	closeOnce sync.Once
	closeErr  error
	unmap     func() error
	mapped    bool // data is a memory map (Open), which Release may advise on
	closed    atomic.Bool
}

// Parse reads a whole safetensors file held in memory. The returned File
// aliases data.
func Parse(data []byte) (*File, error) {
	return parse(data, func() error { return nil })
}

func parse(data []byte, unmap func() error) (*File, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("%w: %d bytes is too short for the header length", ErrFormat, len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > MaxHeader || n > uint64(len(data)-8) {
		return nil, fmt.Errorf("%w: header length %d does not fit the %d-byte file (limit %d)", ErrFormat, n, len(data), MaxHeader)
	}
	body := data[8+n:]
	tensors, meta, err := parseHeader(data[8:8+n], uint64(len(body)))
	if err != nil {
		return nil, err
	}
	f := &File{Tensors: tensors, Metadata: meta, data: body, byName: make(map[string]int, len(tensors)), unmap: unmap}
	for i, t := range tensors {
		f.byName[t.Name] = i
	}
	return f, nil
}

// Tensor looks a tensor up by name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Data is the bytes of t, which must come from f (Parse has checked that
// they lie inside the file). They alias the file's memory: read-only, and
// valid until Close.
func (f *File) Data(t *Tensor) []byte { return f.data[t.Begin:t.End:t.End] }

// Close releases the memory map, if any; the File's data must not be used
// afterwards. It is idempotent.
func (f *File) Close() error {
	f.closeOnce.Do(func() {
		f.closed.Store(true)
		f.closeErr = f.unmap()
	})
	return f.closeErr
}

// Release tells the OS that the process will not read b, tensor data of
// this File, for a while (a loader that keeps the weights in another
// layout, say): on a File from Open its whole pages leave the resident set
// and come back from the page cache, unchanged, if read again. b stays
// valid. On a File from Parse, after Close, or for a slice not inside the
// file's data, it does nothing.
func (f *File) Release(b []byte) {
	if !f.mapped || f.closed.Load() || len(b) == 0 || len(f.data) == 0 {
		return
	}
	start, end := uintptr(unsafe.Pointer(unsafe.SliceData(f.data))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if end < start || end-start+uintptr(len(b)) > uintptr(len(f.data)) {
		return
	}
	_ = mmap.Release(b) // advice: on failure the pages just stay resident
}
