package gguf

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/kiln-ai/kiln/engine/internal/mmap"
)

// KeyAlignment is the metadata key holding the data alignment (default 32).
const KeyAlignment = "general.alignment"

// File is a parsed GGUF file. Metadata and tensor descriptors are copied out
// of the file; tensor data is served from it (a read-only memory map for
// Open, the caller's slice for Parse). A File is safe for concurrent reads;
// Close must not race with TensorData or with use of the slices it returned.
type File struct {
	Version uint32
	KV      []KeyValue
	Tensors []TensorInfo

	keys      map[string]int
	tensors   map[string]int
	alignment uint64
	dataStart uint64

	data      []byte
	unmap     func() error
	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool
}

// TensorInfo describes one tensor: its name, shape (ggml order: Dims[0] is
// the contiguous dimension), ggml type (TypeF32, TypeF16, TypeQ8_0, ...) and
// byte offset from the start of the data section.
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   uint32
	Offset uint64
}

// Elements is the number of elements (the product of Dims; 1 for no dims).
func (t *TensorInfo) Elements() uint64 {
	n, _ := elements(t.Dims) // Parse rejected overflowing shapes
	return n
}

// Size is the tensor's size in bytes; see TensorSize.
func (t *TensorInfo) Size() (uint64, error) { return TensorSize(t.Type, t.Dims) }

// Close releases the memory map of a File from Open; TensorData slices must
// not be used afterwards, and TensorData fails with ErrClosed. It is
// idempotent.
func (f *File) Close() error {
	f.closeOnce.Do(func() {
		f.closed.Store(true)
		if f.unmap != nil {
			f.closeErr = f.unmap()
		}
	})
	return f.closeErr
}

// Alignment is the data alignment of the file (general.alignment or 32).
func (f *File) Alignment() uint64 { return f.alignment }

// DataOffset is the file offset of the data section.
func (f *File) DataOffset() uint64 { return f.dataStart }

func (f *File) lookup(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Value is the metadata value of key.
func (f *File) Value(key string) (Value, bool) { return f.lookup(key) }

// String is a string value.
func (f *File) String(key string) (string, bool) {
	v, _ := f.lookup(key)
	s, ok := v.v.(string)
	return s, ok
}

// Uint is an integer value of any width and signedness, widened; false when
// it is negative or not an integer.
func (f *File) Uint(key string) (uint64, bool) {
	v, _ := f.lookup(key)
	return asUint(v.v)
}

// Float is a float32 or float64 value (integers are converted too).
func (f *File) Float(key string) (float64, bool) {
	v, _ := f.lookup(key)
	return asFloat(v.v)
}

// Bool is a bool value.
func (f *File) Bool(key string) (bool, bool) {
	v, _ := f.lookup(key)
	b, ok := v.v.(bool)
	return b, ok
}

// Strings is an array of strings, shared with the File: do not modify it.
func (f *File) Strings(key string) ([]string, bool) {
	v, _ := f.lookup(key)
	s, ok := v.v.([]string)
	return s, ok
}

// Float32s is an array of float32 (shared with the File: do not modify it);
// an array of float64 is converted.
func (f *File) Float32s(key string) ([]float32, bool) {
	v, _ := f.lookup(key)
	switch s := v.v.(type) {
	case []float32:
		return s, true
	case []float64:
		out := make([]float32, len(s))
		for i, x := range s {
			out[i] = float32(x)
		}
		return out, true
	}
	return nil, false
}

// Int32s is an array of int32 (shared with the File: do not modify it); an
// array of another integer type is converted when every element fits.
func (f *File) Int32s(key string) ([]int32, bool) {
	v, _ := f.lookup(key)
	switch s := v.v.(type) {
	case []int32:
		return s, true
	case []int8:
		return convertInts(s)
	case []uint8:
		return convertInts(s)
	case []int16:
		return convertInts(s)
	case []uint16:
		return convertInts(s)
	case []uint32:
		return convertInts(s)
	case []int64:
		return convertInts(s)
	case []uint64:
		return convertInts(s)
	}
	return nil, false
}

func convertInts[T int8 | uint8 | int16 | uint16 | uint32 | int64 | uint64](s []T) ([]int32, bool) {
	out := make([]int32, len(s))
	for i, x := range s {
		y := int32(x)
		if T(y) != x || (y < 0) != (x < 0) {
			return nil, false
		}
		out[i] = y
	}
	return out, true
}

// Tensor is the descriptor of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// ErrClosed is returned by TensorData after Close.
var ErrClosed = errors.New("gguf: file closed")

// TensorData is the tensor's bytes inside the file (the memory map for
// Open: read-only, valid until Close). It fails with
// ErrUnsupportedTensorType when the type's size is unknown and with ErrFormat
// when the data would lie outside the file.
func (f *File) TensorData(t *TensorInfo) ([]byte, error) {
	if f.closed.Load() {
		return nil, ErrClosed
	}
	return f.span(t)
}

// Release tells the OS that the process will not read b, tensor data of
// this File, for a while (a loader that keeps the weights in another
// layout, say): on a File from Open its whole pages leave the resident set
// and come back from the page cache, unchanged, if read again. b stays
// valid. On a File from Parse, or for a slice not inside the file, it does
// nothing.
func (f *File) Release(b []byte) {
	if f.unmap == nil || f.closed.Load() || len(b) == 0 || len(f.data) == 0 {
		return
	}
	start, end := uintptr(unsafe.Pointer(unsafe.SliceData(f.data))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if end < start || end-start+uintptr(len(b)) > uintptr(len(f.data)) {
		return
	}
	_ = mmap.Release(b) // advice: on failure the pages just stay resident
}

func (f *File) span(t *TensorInfo) ([]byte, error) {
	size, err := t.Size()
	if err != nil {
		return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
	}
	if f.dataStart > uint64(len(f.data)) {
		return nil, fmt.Errorf("gguf: tensor %q: data section starts past the end of the file: %w", t.Name, ErrFormat)
	}
	avail := uint64(len(f.data)) - f.dataStart
	if t.Offset > avail || size > avail-t.Offset {
		return nil, fmt.Errorf("gguf: tensor %q: %d bytes at data offset %d run past the end of the file (%d data bytes): %w",
			t.Name, size, t.Offset, avail, ErrFormat)
	}
	lo := f.dataStart + t.Offset
	return f.data[lo : lo+size : lo+size], nil
}

func isUnsupported(err error) bool { return errors.Is(err, ErrUnsupportedTensorType) }
