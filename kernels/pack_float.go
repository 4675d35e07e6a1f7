package kernels

import "unsafe"

// packF32 and packHalves lay out an F32 matrix, or the two-byte words of
// an F16 or BF16 one (as stored), in pack_layout.go's float layout: group g's
// column c at c*16 elements holds, lane i, row 16g+i's weight c (zeros
// for the lanes past the last row). Sixteen columns at a time, so that a
// 16x16 block is read and written within a few KiB.
func packF32(m *Matrix, buf []byte) *packed {
	p := newPacked(m, buf)
	n := len(p.data) / 4
	dst := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(p.data))), n)
	packColumns(dst, m.F32, m.Rows, m.Cols)
	return p
}

func packHalves(m *Matrix, buf []byte) *packed {
	p := newPacked(m, buf)
	dst := unsafe.Slice((*[2]byte)(unsafe.Pointer(unsafe.SliceData(p.data))), len(p.data)/2)
	src := unsafe.Slice((*[2]byte)(unsafe.Pointer(unsafe.SliceData(m.Raw))), len(m.Raw)/2)
	packColumns(dst, src, m.Rows, m.Cols)
	return p
}

// packColumns interleaves rows x cols elements of src (row-major) into
// dst, sixteen rows to a group, column by column.
func packColumns[E any](dst, src []E, rows, cols int) {
	for g := range (rows + packRows - 1) / packRows {
		grp := dst[g*cols*packRows : (g+1)*cols*packRows]
		n := min(packRows, rows-g*packRows)
		c := 0
		for ; c+packRows <= cols; c += packRows {
			blk := (*[packRows * packRows]E)(grp[c*packRows:])
			for i := range n {
				row := (*[packRows]E)(src[(g*packRows+i)*cols+c:])
				for j, v := range row {
					blk[j*packRows+i] = v
				}
			}
		}
		for ; c < cols; c++ {
			for i := range n {
				grp[c*packRows+i] = src[(g*packRows+i)*cols+c]
			}
		}
	}
}
