package safetensors

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
)

// ErrFormat marks a file that is not a valid safetensors file. Every error
// about a file's contents wraps it.
var ErrFormat = errors.New("safetensors: invalid file")

// MaxHeader bounds the JSON header. The reference implementation allows
// 100 MB; real headers are well under 1 MB.
const MaxHeader = 100 << 20

// maxDims bounds a tensor's rank, so a hostile header cannot ask for huge
// shape slices.
const maxDims = 16

// Tensor describes one tensor: its dtype ("F32", "F16", "BF16", ...), its
// shape (outermost dimension first, row-major) and its byte range
// [Begin, End) within the data section.
type Tensor struct {
	Name       string
	DType      string
	Shape      []uint64
	Begin, End uint64
}

// Elements is the product of the shape (1 for a scalar).
func (t *Tensor) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d // checked against overflow by parseHeader
	}
	return n
}

// dtypeSize is the byte size of one element of each dtype the format
// defines. Sub-byte and unknown dtypes are refused.
var dtypeSize = map[string]uint64{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// DTypeSize is the size in bytes of one element of dtype, 0 when unknown.
func DTypeSize(dtype string) int { return int(dtypeSize[dtype]) }

type rawTensor struct {
	DType       *string   `json:"dtype"`
	Shape       *[]uint64 `json:"shape"`
	DataOffsets *[]uint64 `json:"data_offsets"`
}

// parseHeader decodes the JSON header and checks every tensor against a
// data section of dataSize bytes. The tensors come back in file order
// (sorted by Begin).
func parseHeader(header []byte, dataSize uint64) ([]Tensor, map[string]string, error) {
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, fmt.Errorf("%w: header is not a JSON object", ErrFormat)
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("%w: header: %w", ErrFormat, err)
	}
	var tensors []Tensor
	var meta map[string]string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: header: %w", ErrFormat, err)
		}
		name, _ := tok.(string) // object keys are always strings
		if seen[name] {
			return nil, nil, fmt.Errorf("%w: header names %q twice", ErrFormat, name)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := dec.Decode(&meta); err != nil {
				return nil, nil, fmt.Errorf("%w: __metadata__ is not a string map: %w", ErrFormat, err)
			}
			continue
		}
		var raw rawTensor
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("%w: tensor %q: %w", ErrFormat, name, err)
		}
		t, err := checkTensor(name, raw, dataSize)
		if err != nil {
			return nil, nil, err
		}
		tensors = append(tensors, t)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("%w: header: %w", ErrFormat, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: header has data after its JSON object", ErrFormat)
	}
	if err := checkOverlap(tensors); err != nil {
		return nil, nil, err
	}
	return tensors, meta, nil
}

// checkTensor validates one header entry against the data section size.
func checkTensor(name string, raw rawTensor, dataSize uint64) (Tensor, error) {
	if raw.DType == nil || raw.Shape == nil || raw.DataOffsets == nil {
		return Tensor{}, fmt.Errorf("%w: tensor %q lacks dtype, shape or data_offsets", ErrFormat, name)
	}
	t := Tensor{Name: name, DType: *raw.DType, Shape: *raw.Shape}
	size, ok := dtypeSize[t.DType]
	if !ok {
		return Tensor{}, fmt.Errorf("%w: tensor %q has unknown dtype %q", ErrFormat, name, t.DType)
	}
	if len(t.Shape) > maxDims {
		return Tensor{}, fmt.Errorf("%w: tensor %q has %d dimensions (at most %d)", ErrFormat, name, len(t.Shape), maxDims)
	}
	if len(*raw.DataOffsets) != 2 {
		return Tensor{}, fmt.Errorf("%w: tensor %q data_offsets has %d values, want 2", ErrFormat, name, len(*raw.DataOffsets))
	}
	t.Begin, t.End = (*raw.DataOffsets)[0], (*raw.DataOffsets)[1]
	if t.Begin > t.End || t.End > dataSize {
		return Tensor{}, fmt.Errorf("%w: tensor %q spans [%d, %d), outside the %d-byte data section", ErrFormat, name, t.Begin, t.End, dataSize)
	}
	n := size
	for _, d := range t.Shape {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 {
			return Tensor{}, fmt.Errorf("%w: tensor %q shape %v overflows", ErrFormat, name, t.Shape)
		}
		n = lo
	}
	if n != t.End-t.Begin {
		return Tensor{}, fmt.Errorf("%w: tensor %q is %s %v (%d bytes) but spans %d bytes", ErrFormat, name, t.DType, t.Shape, n, t.End-t.Begin)
	}
	return t, nil
}

// checkOverlap sorts tensors by offset and refuses two sharing a byte.
func checkOverlap(ts []Tensor) error {
	slices.SortFunc(ts, func(a, b Tensor) int {
		return cmp.Or(cmp.Compare(a.Begin, b.Begin), cmp.Compare(a.End, b.End), cmp.Compare(a.Name, b.Name))
	})
	for i := 1; i < len(ts); i++ {
		if ts[i].Begin < ts[i-1].End {
			return fmt.Errorf("%w: tensors %q and %q overlap", ErrFormat, ts[i-1].Name, ts[i].Name)
		}
	}
	return nil
}
