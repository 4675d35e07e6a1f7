package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Writer builds a GGUF v3 file: metadata in the order keys were first set,
// then tensors in the order added, each aligned to general.alignment (32
// unless set with SetUint32). Errors from the setters (a duplicate tensor, a
// data length that does not match the shape) are reported by WriteTo.
type Writer struct {
	kv      []KeyValue
	keys    map[string]int
	tensors []writerTensor
	names   map[string]bool
	err     error
}

type writerTensor struct {
	info TensorInfo
	data []byte
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{keys: map[string]int{}, names: map[string]bool{}}
}

// Set sets key to v, replacing an earlier value in place.
func (w *Writer) Set(key string, v Value) {
	if i, ok := w.keys[key]; ok {
		w.kv[i].Value = v
		return
	}
	w.keys[key] = len(w.kv)
	w.kv = append(w.kv, KeyValue{Key: key, Value: v})
}

func (w *Writer) set(key string, x any) {
	v, err := ValueOf(x)
	if err != nil {
		w.fail(err)
		return
	}
	w.Set(key, v)
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// SetString sets a string value.
func (w *Writer) SetString(key, v string) { w.set(key, v) }

// SetUint32 sets a uint32 value.
func (w *Writer) SetUint32(key string, v uint32) { w.set(key, v) }

// SetFloat32 sets a float32 value.
func (w *Writer) SetFloat32(key string, v float32) { w.set(key, v) }

// SetBool sets a bool value.
func (w *Writer) SetBool(key string, v bool) { w.set(key, v) }

// SetStrings sets an array of strings.
func (w *Writer) SetStrings(key string, v []string) { w.set(key, v) }

// SetInt32s sets an array of int32.
func (w *Writer) SetInt32s(key string, v []int32) { w.set(key, v) }

// SetFloat32s sets an array of float32.
func (w *Writer) SetFloat32s(key string, v []float32) { w.set(key, v) }

// AddTensor adds a tensor of the given shape (ggml order) and ggml type with
// its raw little-endian bytes. For a known type len(data) must equal
// TensorSize(typ, dims); data of an unknown type is written as given. The
// Writer keeps data until WriteTo.
func (w *Writer) AddTensor(name string, dims []uint64, typ uint32, data []byte) {
	if w.names[name] {
		w.fail(fmt.Errorf("gguf: writer: duplicate tensor %q", name))
		return
	}
	if len(dims) > maxDims {
		w.fail(fmt.Errorf("gguf: writer: tensor %q has %d dimensions, at most %d", name, len(dims), maxDims))
		return
	}
	size, err := TensorSize(typ, dims)
	switch {
	case errors.Is(err, ErrUnsupportedTensorType):
	case err != nil:
		w.fail(fmt.Errorf("gguf: writer: tensor %q: %w", name, err))
		return
	case uint64(len(data)) != size:
		w.fail(fmt.Errorf("gguf: writer: tensor %q: %s %v needs %d bytes, got %d", name, TypeName(typ), dims, size, len(data)))
		return
	}
	w.names[name] = true
	w.tensors = append(w.tensors, writerTensor{
		info: TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: typ},
		data: data,
	})
}

func (w *Writer) alignment() (uint64, error) {
	i, ok := w.keys[KeyAlignment]
	if !ok {
		return defaultAlignment, nil
	}
	a, ok := asUint(w.kv[i].Value.v)
	if !ok || a == 0 || a&(a-1) != 0 || a > maxAlignment {
		return 0, fmt.Errorf("gguf: writer: %s = %v is not a power of two up to %d", KeyAlignment, w.kv[i].Value.v, maxAlignment)
	}
	return a, nil
}

// WriteTo writes the file. It returns the first error recorded by a setter,
// or the first write error.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align, err := w.alignment()
	if err != nil {
		return 0, err
	}
	e := encoder{w: bufio.NewWriterSize(out, 1<<16)}
	e.raw([]byte(magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		if err := e.value(kv.Value, 0); err != nil {
			return e.n, fmt.Errorf("gguf: writer: metadata %q: %w", kv.Key, err)
		}
	}
	var off uint64
	for i := range w.tensors {
		t := &w.tensors[i]
		t.info.Offset = off
		e.str(t.info.Name)
		e.u32(uint32(len(t.info.Dims)))
		for _, d := range t.info.Dims {
			e.u64(d)
		}
		e.u32(t.info.Type)
		e.u64(off)
		off = alignUp(off+uint64(len(t.data)), align)
	}
	if len(w.tensors) > 0 {
		// Like gguf-py, a file without tensors ends after its metadata.
		e.pad(align)
	}
	for _, t := range w.tensors {
		e.raw(t.data)
		e.pad(align)
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

// encoder writes little-endian fields, keeping the first error and the
// byte count.
type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(p []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.err = err
}

func (e *encoder) u8(v uint8)   { e.buf[0] = v; e.raw(e.buf[:1]) }
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.raw(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.raw(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.raw(e.buf[:8]) }

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		n, err := e.w.WriteString(s)
		e.n += int64(n)
		e.err = err
	}
}

func (e *encoder) pad(align uint64) {
	var zeros [64]byte
	for n := alignUp(uint64(e.n), align) - uint64(e.n); n > 0 && e.err == nil; {
		k := min(n, uint64(len(zeros)))
		e.raw(zeros[:k])
		n -= k
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// value writes v's payload (its type tag is written by the caller; for an
// array the payload is the element type, count and elements).
func (e *encoder) value(v Value, depth int) error {
	switch x := v.v.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		e.u8(b2u(x))
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	default:
		if v.typ != ValueArray {
			return fmt.Errorf("invalid value of type %s holding %T", v.typ, v.v)
		}
		if depth >= maxDepth {
			return fmt.Errorf("arrays nested deeper than %d", maxDepth)
		}
		e.u32(uint32(v.elem))
		e.u64(uint64(v.Len()))
		return e.elems(v, depth)
	}
	return nil
}

func (e *encoder) elems(v Value, depth int) error {
	switch s := v.v.(type) {
	case []uint8:
		e.raw(s)
	case []int8:
		each(s, func(x int8) { e.u8(uint8(x)) })
	case []uint16:
		each(s, e.u16)
	case []int16:
		each(s, func(x int16) { e.u16(uint16(x)) })
	case []uint32:
		each(s, e.u32)
	case []int32:
		each(s, func(x int32) { e.u32(uint32(x)) })
	case []float32:
		each(s, func(x float32) { e.u32(math.Float32bits(x)) })
	case []bool:
		each(s, func(x bool) { e.u8(b2u(x)) })
	case []string:
		each(s, e.str)
	case []uint64:
		each(s, e.u64)
	case []int64:
		each(s, func(x int64) { e.u64(uint64(x)) })
	case []float64:
		each(s, func(x float64) { e.u64(math.Float64bits(x)) })
	case []Value:
		for i, x := range s {
			if x.typ != ValueArray {
				return fmt.Errorf("nested array element %d is a %s", i, x.typ)
			}
			if err := e.value(x, depth+1); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	default:
		return fmt.Errorf("invalid array holding %T", v.v)
	}
	return nil
}

func each[T any](s []T, f func(T)) {
	for _, x := range s {
		f(x)
	}
}
