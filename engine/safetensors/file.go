package safetensors

import (
	"encoding/binary"
	"fmt"
	"sync"
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
	f.closeOnce.Do(func() { f.closeErr = f.unmap() })
	return f.closeErr
}
