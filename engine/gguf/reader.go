package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

const (
	magic            = "GGUF"
	maxDims          = 4  // GGML_MAX_DIMS
	maxDepth         = 16 // nesting of arrays of arrays
	defaultAlignment = 32
	maxAlignment     = 1 << 30
	// The smallest encodings of a metadata entry (empty key, uint8 value)
	// and of a tensor descriptor (empty name, no dims): they bound the
	// counts in the header against the bytes that remain.
	minKVSize     = 8 + 4 + 1
	minTensorSize = 8 + 4 + 4 + 8
)

// Parse reads a GGUF file held in memory. Tensor data returned by the File
// aliases data. Every malformed input yields an error wrapping ErrFormat;
// no count or length read from data can allocate more than a small multiple
// of len(data).
func Parse(data []byte) (*File, error) { return parse(data, nil) }

func parse(data []byte, unmap func() error) (*File, error) {
	d := decoder{b: data}
	version, err := d.header()
	if err != nil {
		return nil, err
	}
	nTensors, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	if nKV > d.remaining()/minKVSize {
		return nil, fmt.Errorf("gguf: %d metadata entries cannot fit in the %d remaining bytes: %w", nKV, d.remaining(), ErrFormat)
	}
	f := &File{
		Version: version,
		KV:      make([]KeyValue, 0, nKV),
		keys:    make(map[string]int, nKV),
		data:    data,
		unmap:   unmap,
	}
	if err := f.readMetadata(&d, nKV); err != nil {
		return nil, err
	}
	if err := f.readTensorInfos(&d, nTensors); err != nil {
		return nil, err
	}

	// The data section starts at the next multiple of the alignment. A file
	// without tensors (a vocabulary-only file) may end before the padding.
	start := alignUp(uint64(d.off), f.alignment)
	if start > uint64(len(data)) {
		if nTensors != 0 {
			return nil, fmt.Errorf("gguf: file ends at %d, before its data section at %d: %w", len(data), start, ErrFormat)
		}
		start = uint64(len(data))
	}
	f.dataStart = start
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if _, err := f.span(t); err != nil && !isUnsupported(err) {
			return nil, err
		}
	}
	return f, nil
}

// header checks the magic and reads the version: 2 or 3, little-endian.
func (d *decoder) header() (uint32, error) {
	data := d.b
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return 0, fmt.Errorf("gguf: not a GGUF file (magic %q): %w", data[:min(len(data), len(magic))], ErrFormat)
	}
	d.off = len(magic)
	version, err := d.u32("version")
	if err != nil {
		return 0, err
	}
	switch {
	case version == 2 || version == 3:
		return version, nil
	case version == 1:
		return 0, fmt.Errorf("gguf: version 1 (32-bit counts) is not supported: %w", ErrFormat)
	case bits.ReverseBytes32(version) == 2 || bits.ReverseBytes32(version) == 3:
		return 0, fmt.Errorf("gguf: big-endian files are not supported: %w", ErrFormat)
	default:
		return 0, fmt.Errorf("gguf: unknown version %d: %w", version, ErrFormat)
	}
}

// readMetadata reads n key-value pairs (no duplicate keys) and the
// alignment they set.
func (f *File) readMetadata(d *decoder, n uint64) error {
	for i := range n {
		key, err := d.str()
		if err != nil {
			return fmt.Errorf("gguf: metadata %d key: %w", i, err)
		}
		typ, err := d.u32("value type")
		if err != nil {
			return fmt.Errorf("gguf: metadata %q: %w", key, err)
		}
		v, err := d.value(ValueType(typ), 0)
		if err != nil {
			return fmt.Errorf("gguf: metadata %q: %w", key, err)
		}
		if _, dup := f.keys[key]; dup {
			return fmt.Errorf("gguf: duplicate metadata key %q: %w", key, ErrFormat)
		}
		f.keys[key] = len(f.KV)
		f.KV = append(f.KV, KeyValue{Key: key, Value: v})
	}
	f.alignment = defaultAlignment
	if kv, ok := f.lookup(KeyAlignment); ok {
		a, ok := asUint(kv.v)
		if !ok || a == 0 || a&(a-1) != 0 || a > maxAlignment {
			return fmt.Errorf("gguf: %s = %v is not a power of two up to %d: %w", KeyAlignment, kv.v, maxAlignment, ErrFormat)
		}
		f.alignment = a
	}
	return nil
}

// readTensorInfos reads n tensor descriptions: unique names, aligned
// offsets.
func (f *File) readTensorInfos(d *decoder, n uint64) error {
	if n > d.remaining()/minTensorSize {
		return fmt.Errorf("gguf: %d tensors cannot fit in the %d remaining bytes: %w", n, d.remaining(), ErrFormat)
	}
	f.Tensors = make([]TensorInfo, 0, n)
	f.tensors = make(map[string]int, n)
	for i := range n {
		t, err := d.tensorInfo()
		if err != nil {
			return fmt.Errorf("gguf: tensor %d: %w", i, err)
		}
		if t.Offset%f.alignment != 0 {
			return fmt.Errorf("gguf: tensor %q: offset %d is not a multiple of the alignment %d: %w", t.Name, t.Offset, f.alignment, ErrFormat)
		}
		if _, dup := f.tensors[t.Name]; dup {
			return fmt.Errorf("gguf: duplicate tensor name %q: %w", t.Name, ErrFormat)
		}
		f.tensors[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	return nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// decoder reads little-endian GGUF fields from b, never past its end.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) remaining() uint64 { return uint64(len(d.b) - d.off) }

func (d *decoder) take(n uint64, what string) ([]byte, error) {
	if n > d.remaining() {
		return nil, fmt.Errorf("%s: needs %d bytes at offset %d, %d remain: %w", what, n, d.off, d.remaining(), ErrFormat)
	}
	p := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return p, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	p, err := d.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	p, err := d.take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

func (d *decoder) str() (string, error) {
	n, err := d.u64("string length")
	if err != nil {
		return "", err
	}
	p, err := d.take(n, "string")
	if err != nil {
		return "", err
	}
	return string(p), nil
}

func (d *decoder) tensorInfo() (TensorInfo, error) {
	name, err := d.str()
	if err != nil {
		return TensorInfo{}, fmt.Errorf("name: %w", err)
	}
	nDims, err := d.u32("dimension count")
	if err != nil {
		return TensorInfo{}, fmt.Errorf("%q: %w", name, err)
	}
	if nDims > maxDims {
		return TensorInfo{}, fmt.Errorf("%q: %d dimensions, at most %d: %w", name, nDims, maxDims, ErrFormat)
	}
	t := TensorInfo{Name: name, Dims: make([]uint64, nDims)}
	for j := range t.Dims {
		if t.Dims[j], err = d.u64("dimension"); err != nil {
			return TensorInfo{}, fmt.Errorf("%q: %w", name, err)
		}
	}
	if _, ok := elements(t.Dims); !ok {
		return TensorInfo{}, fmt.Errorf("%q: shape %v: element count overflows: %w", name, t.Dims, ErrFormat)
	}
	if t.Type, err = d.u32("tensor type"); err != nil {
		return TensorInfo{}, fmt.Errorf("%q: %w", name, err)
	}
	if t.Offset, err = d.u64("tensor offset"); err != nil {
		return TensorInfo{}, fmt.Errorf("%q: %w", name, err)
	}
	return t, nil
}

// value reads one value of type t (for an array: its element type, count
// and elements).
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	switch t {
	case ValueUint8, ValueInt8, ValueBool:
		p, err := d.take(1, t.String())
		if err != nil {
			return Value{}, err
		}
		switch t {
		case ValueUint8:
			return Value{typ: t, v: p[0]}, nil
		case ValueInt8:
			return Value{typ: t, v: int8(p[0])}, nil
		}
		return Value{typ: t, v: p[0] != 0}, nil
	case ValueUint16, ValueInt16:
		p, err := d.take(2, t.String())
		if err != nil {
			return Value{}, err
		}
		u := binary.LittleEndian.Uint16(p)
		if t == ValueInt16 {
			return Value{typ: t, v: int16(u)}, nil
		}
		return Value{typ: t, v: u}, nil
	case ValueUint32, ValueInt32, ValueFloat32:
		u, err := d.u32(t.String())
		if err != nil {
			return Value{}, err
		}
		switch t {
		case ValueInt32:
			return Value{typ: t, v: int32(u)}, nil
		case ValueFloat32:
			return Value{typ: t, v: math.Float32frombits(u)}, nil
		}
		return Value{typ: t, v: u}, nil
	case ValueUint64, ValueInt64, ValueFloat64:
		u, err := d.u64(t.String())
		if err != nil {
			return Value{}, err
		}
		switch t {
		case ValueInt64:
			return Value{typ: t, v: int64(u)}, nil
		case ValueFloat64:
			return Value{typ: t, v: math.Float64frombits(u)}, nil
		}
		return Value{typ: t, v: u}, nil
	case ValueString:
		s, err := d.str()
		if err != nil {
			return Value{}, err
		}
		return Value{typ: t, v: s}, nil
	case ValueArray:
		return d.array(depth)
	}
	return Value{}, fmt.Errorf("unknown value type %d: %w", uint32(t), ErrFormat)
}

func (d *decoder) array(depth int) (Value, error) {
	if depth >= maxDepth {
		return Value{}, fmt.Errorf("arrays nested deeper than %d: %w", maxDepth, ErrFormat)
	}
	et, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	size := elem.encodedSize()
	if size == 0 {
		return Value{}, fmt.Errorf("array of unknown value type %d: %w", et, ErrFormat)
	}
	n, err := d.u64("array length")
	if err != nil {
		return Value{}, err
	}
	if n > d.remaining()/size {
		return Value{}, fmt.Errorf("array of %d %s cannot fit in the %d remaining bytes: %w", n, elem, d.remaining(), ErrFormat)
	}
	switch elem {
	case ValueString:
		return d.strings(n)
	case ValueArray:
		vs := make([]Value, n)
		for i := range vs {
			if vs[i], err = d.array(depth + 1); err != nil {
				return Value{}, fmt.Errorf("element %d: %w", i, err)
			}
		}
		return array(ValueArray, vs), nil
	}
	// Fixed-size elements: the check above guarantees n*size bytes remain.
	p, _ := d.take(n*size, "array")
	switch elem {
	case ValueUint8:
		return array(elem, append([]uint8(nil), p...)), nil
	case ValueInt8:
		return array(elem, decodeSlice(p, 1, func(b []byte) int8 { return int8(b[0]) })), nil
	case ValueBool:
		return array(elem, decodeSlice(p, 1, func(b []byte) bool { return b[0] != 0 })), nil
	case ValueUint16:
		return array(elem, decodeSlice(p, 2, binary.LittleEndian.Uint16)), nil
	case ValueInt16:
		return array(elem, decodeSlice(p, 2, func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) })), nil
	case ValueUint32:
		return array(elem, decodeSlice(p, 4, binary.LittleEndian.Uint32)), nil
	case ValueInt32:
		return array(elem, decodeSlice(p, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })), nil
	case ValueFloat32:
		return array(elem, decodeSlice(p, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })), nil
	case ValueUint64:
		return array(elem, decodeSlice(p, 8, binary.LittleEndian.Uint64)), nil
	case ValueInt64:
		return array(elem, decodeSlice(p, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })), nil
	default: // ValueFloat64
		return array(elem, decodeSlice(p, 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })), nil
	}
}

func decodeSlice[T any](p []byte, size int, dec func([]byte) T) []T {
	out := make([]T, len(p)/size)
	for i := range out {
		out[i] = dec(p[i*size : i*size+size])
	}
	return out
}

// strings reads n length-prefixed strings with one allocation for all their
// bytes: a vocabulary of 150k pieces costs two allocations, not 150k.
func (d *decoder) strings(n uint64) (Value, error) {
	start := d.off
	for i := range n {
		l, err := d.u64("string length")
		if err != nil {
			return Value{}, fmt.Errorf("element %d: %w", i, err)
		}
		if _, err := d.take(l, "string"); err != nil {
			return Value{}, fmt.Errorf("element %d: %w", i, err)
		}
	}
	all := string(d.b[start:d.off])
	out := make([]string, n)
	off := 0
	for i := range out {
		l := int(binary.LittleEndian.Uint64(d.b[start+off:]))
		off += 8
		out[i] = all[off : off+l]
		off += l
	}
	return array(ValueString, out), nil
}
