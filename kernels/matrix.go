package kernels

import "fmt"

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
	l, ok := m.Type.traits()
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
	l := &types[m.Type]
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
