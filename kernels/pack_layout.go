package kernels

import "unsafe"

// Packed weights for the avx512 path. The row-major blocks of a quantized
// matrix suit a kernel that reduces each row's products horizontally; a
// VNNI kernel is faster with sixteen rows side by side, one per 32-bit
// lane, so that a broadcast of four activation bytes meets four bytes of
// each of sixteen rows in one VPDPBUSD and a block's sixteen sums land in
// one register, already in output order, with no horizontal work. Prepare
// builds that copy once, after loading; the row-major data stays (the
// embedding lookup, the trainer, the other paths and DequantRow read it).
//
// A group is sixteen consecutive rows (the last group of a matrix whose
// rows are not a multiple of 16 repeats its last row; those lanes are
// never stored). Q8_0, per group:
//
//	scales: nb x 16 halves, lane i of block k at 32k+2i, padded to 64 bytes
//	quants: nb x 512 bytes: block k at 512k; its four-byte column q (0..7)
//	        at 64q holds, for each lane i at 4i, quants 4q..4q+3 of row i
//	        plus 128 (so that they are unsigned, as VPDPBUSD wants them)
//
// The legacy 4- and 5-bit types keep their nibble bytes as they are (a
// row's byte j holds value j in its low nibble and value j+16 in its high
// one), four bytes of each row to a lane, so that one VPANDD with 0x0F
// bytes gives a register of values 4q..4q+3 and one VPSRLW by 4 and a
// VPANDD the register of values 16+4q..16+4q+3. Their unsigned quants
// (0..15, 0..31) are what VPDPBUSD multiplies; Q4_0's offset of 8 and
// Q5_0's of 16 are taken off as -8 or -16 times the activation's sum, and
// the _1 types add their min term m*d_x*sum in float. Per group:
//
//	scales: Q4_0, Q5_0: nb x 16 halves d as Q8_0's, padded to 64 bytes
//	        Q4_1, Q5_1: nb x 64 bytes: block k's d of lane i at 64k+2i,
//	        its m at 64k+32+2i
//	quants: Q4_0, Q4_1: nb x 256 bytes: block k at 256k; column q (0..3)
//	        at 64q holds, for each lane i at 4i, nibble bytes 4q..4q+3 of
//	        row i (values 4q..4q+3 low, 16+4q..16+4q+3 high)
//	        Q5_0, Q5_1: nb x 320 bytes: block k at 320k, its nibble columns
//	        as Q4's and at 256 the fifth bits, four bytes per lane i at
//	        256+4i: bit q of byte j is the fifth bit of value 4q+j, bit 4+q
//	        that of value 16+4q+j
//
// The fifth bits are thus those of the eight unpacked registers' byte j
// (the low-nibble registers q = 0..3, then the high ones): shifting the
// lane left by 4-q, or right by q, brings register q's to bit 4 of every
// byte, where a mask of 0x10 bytes picks it.
//
// The K-quants keep their bits as stored, lane by lane: a group is nb
// super-blocks, each of the sixteen rows' blocks side by side (lane i of
// each field at i, 2i or 4i). Q4_K, 2368 bytes a super-block (16x144 =
// 2304 in the rows; +2.8%, the 6-bit scales and mins kept as bytes):
//
//	0     d, 16 halves        32    dmin, 16 halves
//	64    scales: sub-block s (0..7) at 64+16s, a byte a lane
//	192   mins: sub-block s at 192+16s, a byte a lane
//	320   nibbles: chunk j (0..3), column c (0..7) at 320+64(8j+c): for
//	      lane i at 4i, the row's nibble bytes 32j+4c..32j+4c+3, whose
//	      low nibbles are weights 4c..4c+3 of sub-block 2j and high
//	      nibbles the same of sub-block 2j+1 (as in the row)
//
// Q5_K, 2880 bytes a super-block (16x176 = 2816; +2.3%): Q4_K's fields
// and nibble columns (at 832), and the fifth bits as eight qh columns:
//
//	320   qh: column c (0..7) at 320+64c: for lane i, at 4i+b (b = 0..3),
//	      bit 4+j holds the fifth bit of weight 4c+b of sub-block 2j and
//	      bit j that of sub-block 2j+1 (so that a dword shift by j and a
//	      mask put either at bit 4 of each byte for chunk j)
//	832   nibbles: chunk j, column c at 832+64(8j+c), as Q4_K's
//
// Q6_K, 3392 bytes a super-block (16x210 = 3360; +1%, padding to a cache
// line): the sixteen 6-bit values of a sub-block, four four-weight words
// w0..w3 a lane, stored in three: bytes 0-5 of word j (0..2) are w_j,
// bits 6-7 hold two bits of w3 (bits 2j..2j+1), so that w0..w2 are one
// mask each and w3 a few shifts and selects:
//
//	0     scales: sub-block s (0..15) at 16s, an int8 a lane
//	256   d, 16 halves (then 32 bytes of padding)
//	320   quants: sub-block s at 320+192s, word j (0..2) at +64j: for
//	      lane i at 4i, weights 16s+4j..16s+4j+3 of row i in bits 0-5
//	      of its four bytes, and bits 2j..2j+1 of weights 16s+12..16s+15
//	      in bits 6-7
//
// Q3_K, 1792 bytes a super-block (16x110 = 1760; +1.8%): the 3-bit
// quants q (0..7, the weight q-4: the two low bits and the hmask bit as
// bit 2) of a pair of sub-blocks, eight four-weight words w0..w7 a lane,
// stored in three bytes a weight position: bytes of word j (0..2) hold
// w_2j in bits 0-2 and w_2j+1 in bits 3-5, and bits 6-7 the rest of w6
// and w7 (word 0: w6's bits 0-1, word 1: w7's bits 0-1, word 2: bit 6
// w6's bit 2, bit 7 w7's), so that six words are a mask or a shift and
// a mask each, and w6, w7 two shifts, a mask and a select. The sixteen
// signed 6-bit scales are kept as bytes sc<<2, whose two free low bits
// carry d (bits 14-2s..15-2s in sub-block s's byte, s = 0..7), so that a
// group is exactly its rows' 3.4375 bits a weight, padded to a cache line:
//
//	0     scales: sub-block s (0..15) at 16s, a byte a lane: sc<<2 | the
//	      two bits of d
//	256   quants: pair p (0..7, sub-blocks 2p, 2p+1) at 256+192p, word j
//	      (0..2) at +64j: for lane i at 4i, bytes t = 0..3 for weights
//	      32p+4k+t (k = 0..7) as above
//
// Q2_K, 1344 bytes a super-block (16x84 = 1344: as many as the rows):
// the 2-bit quants of a quad of sub-blocks 4q..4q+3, four four-weight
// words a lane for each, in four words, sub-block 4q+f in bits 2f..2f+1
// of each byte. A mask by 0x03 or 0x0C bytes, after a shift by 4 for
// f = 2, 3, unpacks them: the odd sub-blocks' quants as 4q, so that
// their sums are four times the sum (still a word: 4*16*3*127), which
// the even ones' scales, taken as 4*sc, match: the super-block's int sum
// is four times the reference's, exactly. Scale and min of a sub-block
// share a byte (as in the rows, but the min in the low nibble), the two
// of a pair of sub-blocks side by side:
//
//	0     scales: pair k (0..7, sub-blocks 2k, 2k+1) at 32k: for lane i,
//	      at 2i sub-block 2k's byte m | sc<<4, at 2i+1 that of 2k+1
//	256   d, 16 halves        288   dmin, 16 halves
//	320   quants: quad q (0..3) at 320+256q, word j (0..3) at +64j: for
//	      lane i at 4i, byte t holds in bits 2f..2f+1 the quant of weight
//	      4j+t of sub-block 4q+f
//
// F32, F16 and BF16 keep their values as stored (four or two bytes),
// interleaved by column for the outer-product kernels of matmul_float_packed_amd64.s:
//
//	column c (0..cols-1) at c*16 elements: lane i holds row 16g+i's
//	weight c (zero past a matrix's last row)
//
// so that one 64-byte (F32) or 32-byte (F16, BF16) load is a column of
// the group's sixteen rows, which one broadcast activation multiplies
// into the group's sixteen outputs; a group is the bytes of its sixteen
// rows, no more.
//
// Each group, and each super-block of a K-quant group, starts on a
// 64-byte boundary, so every quant load is one cache line.

// packRows is the number of rows a group of packed weights interleaves:
// one per 32-bit lane of a 512-bit register.
const packRows = 16

// packed is a matrix's weights laid out in groups of packRows rows.
type packed struct {
	mem   *packed // the owner of the memory data lies in, when shared (Prepare's)
	src   *byte   // the row-major data it was made from (Matrix.Raw)
	data  []byte  // groups, each starting on a 64-byte boundary
	group int     // bytes per group
	quant int     // bytes from a group's start to its quants (the 32-value types)
}

// Bytes of one super-block of a packed K-quant group (pack_layout.go).
const (
	q4KPackBlock = 2368
	q5KPackBlock = 2880
	q6KPackBlock = 3392
	q3KPackBlock = 1792
	q2KPackBlock = 1344
)

// packedOf is m's packed copy, or nil when it has none or when m is a copy
// of a prepared Matrix given other data since.
func packedOf(m *Matrix) *packed {
	if p := m.pk; p != nil && p.src == m.data() {
		return p
	}
	return nil
}

// data is the address of m's weights (F32 or Raw).
func (m *Matrix) data() *byte {
	if m.Type == F32 {
		return (*byte)(unsafe.Pointer(unsafe.SliceData(m.F32)))
	}
	return unsafe.SliceData(m.Raw)
}

// groupAt is the address of group g.
func (p *packed) groupAt(g int) unsafe.Pointer {
	return unsafe.Pointer(&p.data[g*p.group])
}

// newPacked allocates groups of group bytes for m's rows, 64-byte aligned.
func newPacked(m *Matrix, buf []byte) *packed {
	group, quant := packLayout(m)
	p := &packed{src: m.data(), group: group, quant: quant}
	if n := packedSize(m); buf != nil {
		p.data = buf[:n:n]
	} else {
		p.data = allocPacked(p, n)
	}
	return p
}

// packLayout is the size of one packed group of m's type and shape, and
// where its quants start (after the scales, at a 64-byte boundary), from
// its lane layout.
func packLayout(m *Matrix) (group, quant int) {
	tr, ok := m.Type.traits()
	if !ok || tr.pack == nil {
		panic("kernels: no packed layout for " + m.Type.String())
	}
	nb := m.Cols / tr.elems
	if tr.lanes.scales != 0 {
		quant = (nb*tr.lanes.scales + 63) &^ 63
	}
	return quant + nb*tr.lanes.quants, quant
}

// packedSize is the bytes of m's packed copy: whole groups (a multiple of
// 64).
func packedSize(m *Matrix) int {
	group, _ := packLayout(m)
	return (m.Rows + packRows - 1) / packRows * group
}

// heapAligned returns n zeroed bytes of the Go heap, 64-byte aligned.
func heapAligned(n int) []byte {
	buf := make([]byte, n+63)
	off := int(-uintptrOf(buf) & 63)
	return buf[off : off+n : off+n]
}

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// packRow is the row that lane i of group g holds.
func packRow(m *Matrix, g, i int) int { return min(g*packRows+i, m.Rows-1) }
