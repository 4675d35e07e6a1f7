package gguf

import (
	"errors"
	"fmt"
)

// ErrFormat is wrapped by every error that reports a malformed GGUF input:
// a bad magic or version, a length or count that runs past the end of the
// file, an unknown value type, a duplicate key or tensor name, a tensor whose
// data lies outside the file.
var ErrFormat = errors.New("malformed gguf file")

// ErrUnsupportedTensorType is wrapped when the size of a tensor cannot be
// computed because its ggml type is unknown to this package.
var ErrUnsupportedTensorType = errors.New("unsupported tensor type")

// ValueType is the type tag of a metadata value (gguf_type).
type ValueType uint32

// Metadata value types, numbered as in the GGUF specification.
const (
	ValueUint8   ValueType = 0
	ValueInt8    ValueType = 1
	ValueUint16  ValueType = 2
	ValueInt16   ValueType = 3
	ValueUint32  ValueType = 4
	ValueInt32   ValueType = 5
	ValueFloat32 ValueType = 6
	ValueBool    ValueType = 7
	ValueString  ValueType = 8
	ValueArray   ValueType = 9
	ValueUint64  ValueType = 10
	ValueInt64   ValueType = 11
	ValueFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	ValueUint8:   "uint8",
	ValueInt8:    "int8",
	ValueUint16:  "uint16",
	ValueInt16:   "int16",
	ValueUint32:  "uint32",
	ValueInt32:   "int32",
	ValueFloat32: "float32",
	ValueBool:    "bool",
	ValueString:  "string",
	ValueArray:   "array",
	ValueUint64:  "uint64",
	ValueInt64:   "int64",
	ValueFloat64: "float64",
}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// encodedSize is the smallest number of bytes one value of type t occupies
// in a file; 0 for an unknown type. It bounds counts read from the file
// against the bytes that remain, so no count can cause a huge allocation.
func (t ValueType) encodedSize() uint64 {
	switch t {
	case ValueUint8, ValueInt8, ValueBool:
		return 1
	case ValueUint16, ValueInt16:
		return 2
	case ValueUint32, ValueInt32, ValueFloat32:
		return 4
	case ValueUint64, ValueInt64, ValueFloat64, ValueString:
		return 8 // a string is at least its uint64 length
	case ValueArray:
		return 12 // element type uint32 + count uint64
	}
	return 0
}

// Tensor types (ggml_type) of TensorInfo.Type. The model loader supports
// F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and Q2_K..Q6_K (kernels.DType
// numbers them alike); the others are named so that files holding them can
// be described and their sizes checked.
const (
	TypeF32     uint32 = 0
	TypeF16     uint32 = 1
	TypeQ4_0    uint32 = 2
	TypeQ4_1    uint32 = 3
	TypeQ5_0    uint32 = 6
	TypeQ5_1    uint32 = 7
	TypeQ8_0    uint32 = 8
	TypeQ8_1    uint32 = 9
	TypeQ2_K    uint32 = 10
	TypeQ3_K    uint32 = 11
	TypeQ4_K    uint32 = 12
	TypeQ5_K    uint32 = 13
	TypeQ6_K    uint32 = 14
	TypeQ8_K    uint32 = 15
	TypeIQ2_XXS uint32 = 16
	TypeIQ2_XS  uint32 = 17
	TypeIQ3_XXS uint32 = 18
	TypeIQ1_S   uint32 = 19
	TypeIQ4_NL  uint32 = 20
	TypeIQ3_S   uint32 = 21
	TypeIQ2_S   uint32 = 22
	TypeIQ4_XS  uint32 = 23
	TypeI8      uint32 = 24
	TypeI16     uint32 = 25
	TypeI32     uint32 = 26
	TypeI64     uint32 = 27
	TypeF64     uint32 = 28
	TypeIQ1_M   uint32 = 29
	TypeBF16    uint32 = 30
	TypeTQ1_0   uint32 = 34
	TypeTQ2_0   uint32 = 35
)

// typeTraits is the block layout of a ggml type: blockElems elements are
// stored in blockBytes bytes (ggml's blck_size and type_size).
type typeTraits struct {
	name       string
	blockElems uint64
	blockBytes uint64
}

var tensorTypes = map[uint32]typeTraits{
	TypeF32:     {"F32", 1, 4},
	TypeF16:     {"F16", 1, 2},
	TypeQ4_0:    {"Q4_0", 32, 18},
	TypeQ4_1:    {"Q4_1", 32, 20},
	TypeQ5_0:    {"Q5_0", 32, 22},
	TypeQ5_1:    {"Q5_1", 32, 24},
	TypeQ8_0:    {"Q8_0", 32, 34},
	TypeQ8_1:    {"Q8_1", 32, 36},
	TypeQ2_K:    {"Q2_K", 256, 84},
	TypeQ3_K:    {"Q3_K", 256, 110},
	TypeQ4_K:    {"Q4_K", 256, 144},
	TypeQ5_K:    {"Q5_K", 256, 176},
	TypeQ6_K:    {"Q6_K", 256, 210},
	TypeQ8_K:    {"Q8_K", 256, 292},
	TypeIQ2_XXS: {"IQ2_XXS", 256, 66},
	TypeIQ2_XS:  {"IQ2_XS", 256, 74},
	TypeIQ3_XXS: {"IQ3_XXS", 256, 98},
	TypeIQ1_S:   {"IQ1_S", 256, 50},
	TypeIQ4_NL:  {"IQ4_NL", 32, 18},
	TypeIQ3_S:   {"IQ3_S", 256, 110},
	TypeIQ2_S:   {"IQ2_S", 256, 82},
	TypeIQ4_XS:  {"IQ4_XS", 256, 136},
	TypeI8:      {"I8", 1, 1},
	TypeI16:     {"I16", 1, 2},
	TypeI32:     {"I32", 1, 4},
	TypeI64:     {"I64", 1, 8},
	TypeF64:     {"F64", 1, 8},
	TypeIQ1_M:   {"IQ1_M", 256, 56},
	TypeBF16:    {"BF16", 1, 2},
	TypeTQ1_0:   {"TQ1_0", 256, 54},
	TypeTQ2_0:   {"TQ2_0", 256, 66},
}

// TypeName is the ggml name of a tensor type ("F32", "Q8_0"), or
// "type(N)" when the type is unknown.
func TypeName(typ uint32) string {
	if tr, ok := tensorTypes[typ]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", typ)
}

// TensorSize is the number of bytes a tensor of the given type and shape
// occupies. It fails with ErrUnsupportedTensorType for an unknown type, and
// with ErrFormat when the first dimension is not a whole number of blocks or
// the size overflows.
func TensorSize(typ uint32, dims []uint64) (uint64, error) {
	tr, ok := tensorTypes[typ]
	if !ok {
		return 0, fmt.Errorf("gguf: ggml type %d: %w", typ, ErrUnsupportedTensorType)
	}
	n, ok := elements(dims)
	if !ok {
		return 0, fmt.Errorf("gguf: %s tensor of shape %v: element count overflows: %w", tr.name, dims, ErrFormat)
	}
	if len(dims) > 0 && dims[0]%tr.blockElems != 0 {
		return 0, fmt.Errorf("gguf: %s tensor of shape %v: first dimension is not a multiple of the block size %d: %w",
			tr.name, dims, tr.blockElems, ErrFormat)
	}
	if len(dims) == 0 && tr.blockElems != 1 {
		return 0, fmt.Errorf("gguf: %s scalar tensor: not a whole block: %w", tr.name, ErrFormat)
	}
	blocks := n / tr.blockElems
	if blocks != 0 && tr.blockBytes > maxUint64/blocks {
		return 0, fmt.Errorf("gguf: %s tensor of shape %v: byte size overflows: %w", tr.name, dims, ErrFormat)
	}
	return blocks * tr.blockBytes, nil
}

const maxUint64 = ^uint64(0)

// elements is the product of dims (1 for no dims); false on overflow.
func elements(dims []uint64) (uint64, bool) {
	n := uint64(1)
	for _, d := range dims {
		if d == 0 {
			return 0, true
		}
		if n > maxUint64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}
