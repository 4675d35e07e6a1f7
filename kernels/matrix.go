package kernels

import "fmt"

// DType is the storage type of a weight matrix.
type DType uint8

// Storage types, numbered as in GGUF's ggml_type where one exists.
const (
	F32  DType = 0
	F16  DType = 1
	Q8_0 DType = 8
)

func (t DType) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case Q8_0:
		return "Q8_0"
	}
	return fmt.Sprintf("DType(%d)", uint8(t))
}

// Q8Block is the number of weights in one Q8_0 block, and Q8BlockBytes its
// size: a little-endian IEEE half scale followed by 32 int8 quants (ggml's
// block_q8_0).
const (
	Q8Block      = 32
	Q8BlockBytes = 34
)

// Matrix is a row-major weight matrix of Rows x Cols elements. Exactly one of
// F32 (Type F32) or Raw (F16: 2 bytes per element, little-endian; Q8_0:
// Cols/32 blocks per row) holds the data; both may alias a memory map.
type Matrix struct {
	Rows, Cols int
	Type       DType
	F32        []float32
	Raw        []byte
}

// Validate reports whether the backing slice matches the shape and type.
func (m *Matrix) Validate() error {
	if m.Rows <= 0 || m.Cols <= 0 {
		return fmt.Errorf("kernels: matrix shape %dx%d", m.Rows, m.Cols)
	}
	switch m.Type {
	case F32:
		if len(m.F32) != m.Rows*m.Cols {
			return fmt.Errorf("kernels: f32 matrix %dx%d has %d elements", m.Rows, m.Cols, len(m.F32))
		}
	case F16:
		if len(m.Raw) != m.Rows*m.Cols*2 {
			return fmt.Errorf("kernels: f16 matrix %dx%d has %d bytes", m.Rows, m.Cols, len(m.Raw))
		}
	case Q8_0:
		if m.Cols%Q8Block != 0 {
			return fmt.Errorf("kernels: q8_0 matrix cols %d not a multiple of %d", m.Cols, Q8Block)
		}
		if len(m.Raw) != m.Rows*(m.Cols/Q8Block)*Q8BlockBytes {
			return fmt.Errorf("kernels: q8_0 matrix %dx%d has %d bytes", m.Rows, m.Cols, len(m.Raw))
		}
	default:
		return fmt.Errorf("kernels: unsupported type %v", m.Type)
	}
	return nil
}

// Bytes is the size of the matrix's weights in memory, the bytes one full
// product reads.
func (m *Matrix) Bytes() int {
	if m.Type == F32 {
		return 4 * len(m.F32)
	}
	return len(m.Raw)
}
