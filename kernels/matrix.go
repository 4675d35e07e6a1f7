package kernels

import "fmt"

// DType is the storage type of a weight matrix.
type DType uint8

// Storage types, numbered as GGUF's ggml_type.
const (
	F32  DType = 0
	F16  DType = 1
	Q4_0 DType = 2
	Q4_1 DType = 3
	Q5_0 DType = 6
	Q5_1 DType = 7
	Q8_0 DType = 8
	Q2_K DType = 10
	Q3_K DType = 11
	Q4_K DType = 12
	Q5_K DType = 13
	Q6_K DType = 14
	BF16 DType = 30
)

// layout is the block layout of a type: elems weights stored in bytes
// bytes (ggml's blck_size and type_size).
type layout struct {
	name         string
	elems, bytes int
}

// layouts holds every supported type; a zero entry is an unsupported one.
var layouts = [...]layout{
	F32:  {"F32", 1, 4},
	F16:  {"F16", 1, 2},
	Q4_0: {"Q4_0", 32, 18},
	Q4_1: {"Q4_1", 32, 20},
	Q5_0: {"Q5_0", 32, 22},
	Q5_1: {"Q5_1", 32, 24},
	Q8_0: {"Q8_0", Q8Block, Q8BlockBytes},
	Q2_K: {"Q2_K", QK_K, 84},
	Q3_K: {"Q3_K", QK_K, 110},
	Q4_K: {"Q4_K", QK_K, 144},
	Q5_K: {"Q5_K", QK_K, 176},
	Q6_K: {"Q6_K", QK_K, 210},
	BF16: {"BF16", 1, 2},
}

func (t DType) layout() (layout, bool) {
	if int(t) < len(layouts) && layouts[t].elems != 0 {
		return layouts[t], true
	}
	return layout{}, false
}

func (t DType) String() string {
	if l, ok := t.layout(); ok {
		return l.name
	}
	return fmt.Sprintf("DType(%d)", uint8(t))
}

// Block is the block layout of a supported type: elems weights are stored
// in bytes bytes (1 and 4 for F32). ok is false for an unsupported type.
func (t DType) Block() (elems, bytes int, ok bool) {
	l, ok := t.layout()
	return l.elems, l.bytes, ok
}

// Types lists every supported storage type, in ggml_type order.
func Types() []DType {
	var out []DType
	for t := range layouts {
		if layouts[t].elems != 0 {
			out = append(out, DType(t))
		}
	}
	return out
}

// Q8Block is the number of weights in one Q8_0 block, and Q8BlockBytes its
// size: a little-endian IEEE half scale followed by 32 int8 quants (ggml's
// block_q8_0).
const (
	Q8Block      = 32
	Q8BlockBytes = 34
)

// QK_K is the number of weights in one K-quant super-block (Q2_K..Q6_K).
const QK_K = 256

// Matrix is a row-major weight matrix of Rows x Cols elements. Exactly one of
// F32 (Type F32) or Raw (every other type: F16 and BF16 2 bytes per element,
// little-endian; a quantized type Cols/elems blocks per row, laid out as
// ggml's block_<type>) holds the data; both may alias a memory map.
type Matrix struct {
	Rows, Cols int
	Type       DType
	F32        []float32
	Raw        []byte

	pk *packed // Prepare's copy for the avx512 kernels, or nil; shared by copies of the Matrix
}

// Validate reports whether the backing slice matches the shape and type.
func (m *Matrix) Validate() error {
	if m.Rows <= 0 || m.Cols <= 0 {
		return fmt.Errorf("kernels: matrix shape %dx%d", m.Rows, m.Cols)
	}
	l, ok := m.Type.layout()
	if !ok {
		return fmt.Errorf("kernels: unsupported type %v", m.Type)
	}
	if m.Type == F32 {
		if m.Rows > maxElems/m.Cols || len(m.F32) != m.Rows*m.Cols {
			return fmt.Errorf("kernels: f32 matrix %dx%d has %d elements", m.Rows, m.Cols, len(m.F32))
		}
		return nil
	}
	if m.Cols%l.elems != 0 {
		return fmt.Errorf("kernels: %v matrix cols %d not a multiple of %d", m.Type, m.Cols, l.elems)
	}
	rowBytes := m.Cols / l.elems * l.bytes
	if m.Rows > maxElems/rowBytes || len(m.Raw) != m.Rows*rowBytes {
		return fmt.Errorf("kernels: %v matrix %dx%d has %d bytes", m.Type, m.Rows, m.Cols, len(m.Raw))
	}
	return nil
}

// maxElems bounds a matrix's size so that no size computation overflows.
const maxElems = 1 << 46

// rowBytes is the size of one row of a valid quantized or half matrix.
func (m *Matrix) rowBytes() int {
	l := layouts[m.Type]
	return m.Cols / l.elems * l.bytes
}

// Bytes is the size of the matrix's weights in memory, the bytes one full
// product reads.
func (m *Matrix) Bytes() int {
	if m.Type == F32 {
		return 4 * len(m.F32)
	}
	return len(m.Raw)
}
