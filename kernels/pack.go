package kernels

import (
	"encoding/binary"
	"runtime"
	"sync"
	"unsafe"
)

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
// interleaved by column for the outer-product kernels of floatp_amd64.s:
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

// Bytes of one super-block of a packed K-quant group (pack.go's layouts).
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

// Prepare lays out each matrix's weights for this CPU's fastest kernels,
// once, after loading: on the avx512 path a Q8_0, Q4_0, Q5_0, Q4_1, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, F32, F16 or BF16 matrix gets a packed copy (as many
// bytes again as its weights, but for padding: at most 3% more, and a
// float matrix's rows up to a multiple of 16) that products on that path
// read instead of the row-major data; on the avxvnni path a Q8_0 one.
// Elsewhere, and for the other types, it does nothing. It must run before
// the matrices are shared by concurrent products, and their data must not
// change afterwards (a copy given new data has no packed copy). The work
// is spread over GOMAXPROCS goroutines.
func Prepare(ms ...*Matrix) { PrepareThen(nil, ms...) }

// PrepareThen is Prepare that calls then(m), on the goroutine that packed
// m, as soon as m's packed copy exists (concurrently for different
// matrices): a loader releases m's row-major pages there, so that the
// whole model is never resident twice while it loads.
func PrepareThen(then func(*Matrix), ms ...*Matrix) {
	if best < pathAVXVNNI {
		return
	}
	prepare(ms, best, then)
}

// prepare packs the matrices of ms whose type path p has packed kernels
// for, whatever this CPU runs (the packing is plain Go; tests check it on
// every machine against the row-major product).
func prepare(ms []*Matrix, p kpath, then func(*Matrix)) {
	// The copies share one allocation (huge pages on Linux: allocPacked),
	// each at a 64-byte boundary of it.
	var todo []*Matrix
	var offs []int
	total := 0
	seen := make(map[*Matrix]bool, len(ms))
	for _, m := range ms {
		if m == nil || seen[m] {
			continue
		}
		seen[m] = true
		if m.pk == nil && packsFor(p, m.Type) {
			todo, offs = append(todo, m), append(offs, total)
			total += packedSize(m)
		}
	}
	if len(todo) == 0 {
		return
	}
	owner := &packed{}
	mem := allocPacked(owner, total)
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for i := range work {
				m := todo[i]
				pk := pack(m, mem[offs[i]:offs[i]+packedSize(m)])
				pk.mem = owner
				m.pk = pk
				if then != nil {
					then(m)
				}
			}
		})
	}
	for i := range todo {
		work <- i
	}
	close(work)
	wg.Wait()
}

// packable reports whether Prepare packs matrices of type t on the avx512
// path.
func packable(t DType) bool {
	switch t {
	case Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, F32, F16, BF16:
		return true
	}
	return false
}

// packsFor reports whether path p reads matrices of type t packed: the
// avxvnni path has packed kernels for Q8_0 only (packing the others would
// leave their row-major kernels reading released pages).
func packsFor(p kpath, t DType) bool {
	switch {
	case p >= pathAVX512:
		return packable(t)
	case p == pathAVXVNNI:
		return t == Q8_0
	}
	return false
}

// PackedBytes is the size of the packed copy Prepare made of m's weights,
// 0 when it made none.
func (m *Matrix) PackedBytes() int {
	if p := packedOf(m); p != nil {
		return len(p.data)
	}
	return 0
}

// pack builds the packed copy of a valid matrix of a packable type in buf
// (packedSize(m) bytes, 64-byte aligned), or in memory of its own when buf
// is nil.
func pack(m *Matrix, buf []byte) *packed {
	switch m.Type {
	case Q8_0:
		return packQ8_0(m, buf)
	case Q4_0, Q5_0, Q4_1, Q5_1:
		return packNibbles(m, buf)
	case Q4_K:
		return packQ4_K(m, buf)
	case Q5_K:
		return packQ5_K(m, buf)
	case Q6_K:
		return packQ6_K(m, buf)
	case Q3_K:
		return packQ3_K(m, buf)
	case Q2_K:
		return packQ2_K(m, buf)
	case F32:
		return packF32(m, buf)
	case F16, BF16:
		return packHalves(m, buf)
	}
	return nil
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
// where its quants start (the 32-value types: after the scales).
func packLayout(m *Matrix) (group, quant int) {
	switch m.Type {
	case Q8_0:
		nb := m.Cols / Q8Block
		quant = (nb*2*packRows + 63) &^ 63
		return quant + nb*Q8Block*packRows, quant
	case Q4_0, Q5_0, Q4_1, Q5_1:
		l := nibbleLayoutOf(m.Type)
		nb := m.Cols / Q8Block
		quant = (nb*l.scales + 63) &^ 63
		return quant + nb*l.quants, quant
	case Q4_K:
		return m.Cols / QK_K * q4KPackBlock, 0
	case Q5_K:
		return m.Cols / QK_K * q5KPackBlock, 0
	case Q6_K:
		return m.Cols / QK_K * q6KPackBlock, 0
	case Q3_K:
		return m.Cols / QK_K * q3KPackBlock, 0
	case Q2_K:
		return m.Cols / QK_K * q2KPackBlock, 0
	case F32:
		return m.Cols * packRows * 4, 0
	case F16, BF16:
		return m.Cols * packRows * 2, 0
	}
	panic("kernels: no packed layout for " + m.Type.String())
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

func packQ8_0(m *Matrix, buf []byte) *packed {
	nb := m.Cols / Q8Block
	p := newPacked(m, buf)
	quant := p.quant
	rb := m.rowBytes()
	var rows [packRows][]byte
	for g := range len(p.data) / p.group {
		dst := p.data[g*p.group : (g+1)*p.group]
		for i := range rows {
			rows[i] = m.Raw[packRow(m, g, i)*rb:][:rb]
		}
		// Block by block, so that the writes fill one packed block at a
		// time rather than sweep a whole group (tens of KiB for a wide
		// matrix) once per row.
		for k := range nb {
			for i, row := range rows {
				blk := (*[Q8BlockBytes]byte)(row[k*Q8BlockBytes:])
				dst[k*2*packRows+2*i], dst[k*2*packRows+2*i+1] = blk[0], blk[1]
				qs := (*[Q8Block * packRows]byte)(dst[quant+k*Q8Block*packRows:])
				for q := range Q8Block / 4 {
					v := binary.LittleEndian.Uint32(blk[2+4*q:]) ^ 0x80808080
					binary.LittleEndian.PutUint32(qs[64*q+4*i:], v)
				}
			}
		}
	}
	return p
}

// packKBlocks packs a K-quant matrix whose rows hold blocks of rowBlock
// bytes into super-blocks of packBlock bytes: lane(dst, blk, i) lays row
// block blk out as lane i of the group's super-block dst, for every row
// of every group.
func packKBlocks(m *Matrix, buf []byte, rowBlock, packBlock int, lane func(dst, blk []byte, i int)) *packed {
	nb := m.Cols / QK_K
	p := newPacked(m, buf)
	rb := m.rowBytes()
	for g := range len(p.data) / p.group {
		grp := p.data[g*p.group : (g+1)*p.group]
		for i := range packRows {
			row := m.Raw[packRow(m, g, i)*rb:][:rb]
			for k := range nb {
				lane(grp[k*packBlock:(k+1)*packBlock], row[k*rowBlock:(k+1)*rowBlock], i)
			}
		}
	}
	return p
}

func packQ4_K(m *Matrix, buf []byte) *packed {
	return packKBlocks(m, buf, 144, q4KPackBlock, func(dst, blk []byte, i int) {
		packKScales(dst, blk, i)
		packKNibbles(dst[320:], blk[16:], i)
	})
}

// packKScales writes lane i's d, dmin, sub-block scales and mins of a
// Q4_K or Q5_K block blk into the first 320 bytes of its packed
// super-block dst.
func packKScales(dst, blk []byte, i int) {
	dst[2*i], dst[2*i+1] = blk[0], blk[1]
	dst[32+2*i], dst[32+2*i+1] = blk[2], blk[3]
	for s := range 8 {
		sc, mn := kScaleMin((*[12]byte)(blk[4:16]), s)
		dst[64+16*s+i], dst[192+16*s+i] = sc, mn
	}
}

// packKNibbles writes lane i's 128 nibble bytes qs (as Q4_K and Q5_K
// store them) as the 32 four-byte columns at dst: chunk j, column c at
// 64(8j+c).
func packKNibbles(dst, qs []byte, i int) {
	for j := range 4 {
		for c := range 8 {
			binary.LittleEndian.PutUint32(dst[64*(8*j+c)+4*i:], binary.LittleEndian.Uint32(qs[32*j+4*c:]))
		}
	}
}

// q5KBits maps a Q5_K qh byte (bit s the fifth bit of sub-block s) to its
// packed form: bit 4+j that of sub-block 2j, bit j that of 2j+1.
var q5KBits = func() (t [256]byte) {
	for h := range t {
		for j := range 4 {
			t[h] |= byte(h>>(2*j)&1)<<(4+j) | byte(h>>(2*j+1)&1)<<j
		}
	}
	return t
}()

func packQ5_K(m *Matrix, buf []byte) *packed {
	return packKBlocks(m, buf, 176, q5KPackBlock, func(dst, blk []byte, i int) {
		packKScales(dst, blk, i)
		for l, h := range (*[32]byte)(blk[16:48]) {
			dst[320+64*(l/4)+4*i+l%4] = q5KBits[h]
		}
		packKNibbles(dst[832:], blk[48:], i)
	})
}

// q6KQuants unpacks a Q6_K block's 256 unsigned 6-bit quants (0..63), in
// weight order (dequantQ6_K's bit positions).
func q6KQuants(blk []byte) (q [QK_K]byte) {
	for h := range 2 {
		ql, qh := (*[64]byte)(blk[h*64:]), (*[32]byte)(blk[128+h*32:])
		y := (*[128]byte)(q[h*128:])
		for l, hb := range qh {
			y[l] = ql[l]&15 | hb&3<<4
			y[32+l] = ql[32+l]&15 | hb>>2&3<<4
			y[64+l] = ql[l]>>4 | hb>>4&3<<4
			y[96+l] = ql[32+l]>>4 | hb>>6<<4
		}
	}
	return q
}

func packQ6_K(m *Matrix, buf []byte) *packed {
	return packKBlocks(m, buf, 210, q6KPackBlock, func(out, blk []byte, i int) {
		dst := (*[q6KPackBlock]byte)(out)
		q := q6KQuants(blk)
		for s := range 16 {
			dst[16*s+i] = blk[192+s]
			w, hi := (*[16]byte)(q[16*s:]), (*[4]byte)(q[16*s+12:])
			for j := range 3 {
				d := (*[4]byte)(dst[320+192*s+64*j+4*i:])
				for t, h := range hi {
					d[t] = w[4*j+t] | h>>(2*uint(j))&3<<6
				}
			}
		}
		copy(dst[256+2*i:], blk[208:210])
	})
}

// kLow2Quants unpacks the 2-bit fields of a Q2_K or Q3_K block's 64 quant
// bytes into its 256 weights' values 0..3, in weight order.
func kLow2Quants(qs *[64]byte) (q [QK_K]byte) {
	for e := range q {
		q[e] = qs[e/128*32+e%32] >> (2 * uint(e%128/32)) & 3
	}
	return q
}

// q3KQuants unpacks a Q3_K block's 256 unsigned 3-bit quants (0..7, the
// weight plus 4), in weight order (dequantQ3_K's bit positions).
func q3KQuants(blk []byte) [QK_K]byte {
	q := kLow2Quants((*[64]byte)(blk[32:96]))
	hmask := (*[32]byte)(blk[0:32])
	for e := range q {
		q[e] |= hmask[e%32] >> (uint(e) / 32) & 1 << 2
	}
	return q
}

func packQ3_K(m *Matrix, buf []byte) *packed {
	return packKBlocks(m, buf, 110, q3KPackBlock, func(out, blk []byte, i int) {
		dst := (*[q3KPackBlock]byte)(out)
		sc := q3Scales(blk[96:108])
		d := binary.LittleEndian.Uint16(blk[108:])
		for s := range 16 {
			b := byte(sc[s]) << 2
			if s < 8 {
				b |= byte(d >> (14 - 2*uint(s)) & 3)
			}
			dst[16*s+i] = b
		}
		q := q3KQuants(blk)
		for pr := range 8 {
			for t := range 4 {
				var w [8]byte
				for k := range w {
					w[k] = q[32*pr+4*k+t]
				}
				o := 256 + 192*pr + 4*i + t
				dst[o] = w[0] | w[1]<<3 | w[6]&3<<6
				dst[o+64] = w[2] | w[3]<<3 | w[7]&3<<6
				dst[o+128] = w[4] | w[5]<<3 | w[6]>>2<<6 | w[7]>>2<<7
			}
		}
	})
}

// packedQ3_KLane is lane i of a packed Q3_K group against one activation
// row: per sub-block of 16, the sum of q*x starting from -4 times the
// activation's sum (so that it is the sum of (q-4)*x, at most 8128 in
// magnitude: the kernels' VPDPWSSD takes it as a word), times the scale;
// d gathered from the scale bytes' low bits.
func packedQ3_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q3KPackBlock : (k+1)*q3KPackBlock]
		var isum int32
		var d uint16
		for sb := range 16 {
			b := blk[16*sb+i]
			if sb < 8 {
				d = d<<2 | uint16(b&3)
			}
			qs := blk[256+192*(sb/2):]
			is := -4 * int32(a.bsums[sb])
			for t := range 4 {
				s0, s1, s2 := qs[4*i+t], qs[64+4*i+t], qs[128+4*i+t]
				w := [8]byte{s0 & 7, s0 >> 3 & 7, s1 & 7, s1 >> 3 & 7, s2 & 7, s2 >> 3 & 7,
					s0>>6 | s2>>6&1<<2, s1>>6 | s2>>7<<2}
				x := a.qs[16*sb+t:]
				for j := range 4 {
					is += int32(w[4*(sb%2)+j]) * int32(x[4*j])
				}
			}
			isum += int32(int8(b)>>2) * is
		}
		s += HalfToFloat(d) * a.d * float32(isum)
	}
	return s
}

func packQ2_K(m *Matrix, buf []byte) *packed {
	return packKBlocks(m, buf, 84, q2KPackBlock, func(out, blk []byte, i int) {
		dst := (*[q2KPackBlock]byte)(out)
		for s, b := range blk[:16] {
			dst[32*(s/2)+2*i+s%2] = b>>4 | b<<4
		}
		copy(dst[256+2*i:], blk[80:82])
		copy(dst[288+2*i:], blk[82:84])
		q := kLow2Quants((*[64]byte)(blk[16:80]))
		for qd := range 4 {
			for j := range 4 {
				for t := range 4 {
					var b byte
					for f := range 4 {
						b |= q[16*(4*qd+f)+4*j+t] << (2 * uint(f))
					}
					dst[320+256*qd+64*j+4*i+t] = b
				}
			}
		}
	})
}

// packedQ2_KLane is lane i of a packed Q2_K group against one activation
// row: per sub-block, the sum of q*x times the scale, the mins against
// the activation's sums of 16, in the reference's order (the kernels'
// int sum, four times this one, converts to the same float times d/4).
func packedQ2_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q2KPackBlock : (k+1)*q2KPackBlock]
		var isum, imin int32
		for sb := range 16 {
			b := blk[32*(sb/2)+2*i+sb%2]
			qs := blk[320+256*(sb/4):]
			var v int32
			for j := range 4 {
				for t := range 4 {
					q := qs[64*j+4*i+t] >> (2 * uint(sb%4)) & 3
					v += int32(q) * int32(a.qs[16*sb+4*j+t])
				}
			}
			isum += int32(b>>4) * v
			imin += int32(b&15) * int32(a.bsums[sb])
		}
		s += half(blk[256+2*i:])*a.d*float32(isum) - half(blk[288+2*i:])*a.d*float32(imin)
	}
	return s
}

// nibbleLayout is where a legacy 4- or 5-bit type keeps its fields, in
// its row-major blocks and in the packed groups.
type nibbleLayout struct {
	min    bool  // a half m at 2 of the block (the _1 types), packed at 32 of a block's scales
	qh     int   // offset of the 32 fifth bits in the block, or -1 (the 4-bit types)
	qs     int   // offset of the 16 nibble bytes in the block
	scales int   // packed scale bytes per block
	quants int   // packed quant bytes per block
	offset int32 // what the unsigned quant exceeds the weight by
}

func nibbleLayoutOf(t DType) nibbleLayout {
	switch t {
	case Q4_0:
		return nibbleLayout{qh: -1, qs: 2, scales: 32, quants: 256, offset: 8}
	case Q5_0:
		return nibbleLayout{qh: 2, qs: 6, scales: 32, quants: 320, offset: 16}
	case Q4_1:
		return nibbleLayout{min: true, qh: -1, qs: 4, scales: 64, quants: 256}
	case Q5_1:
		return nibbleLayout{min: true, qh: 4, qs: 8, scales: 64, quants: 320}
	}
	panic("kernels: no nibble layout for " + t.String())
}

func packNibbles(m *Matrix, buf []byte) *packed {
	l := nibbleLayoutOf(m.Type)
	_, size, _ := m.Type.Block()
	nb := m.Cols / Q8Block
	p := newPacked(m, buf)
	quant := p.quant
	rb := m.rowBytes()
	var rows [packRows][]byte
	for g := range len(p.data) / p.group {
		dst := p.data[g*p.group : (g+1)*p.group]
		for i := range rows {
			rows[i] = m.Raw[packRow(m, g, i)*rb:][:rb]
		}
		for k := range nb { // block by block, as packQ8_0
			for i, row := range rows {
				blk := row[k*size : (k+1)*size]
				sc := dst[k*l.scales:]
				sc[2*i], sc[2*i+1] = blk[0], blk[1]
				if l.min {
					sc[32+2*i], sc[32+2*i+1] = blk[2], blk[3]
				}
				// Four-byte words, not copy: a memmove call per word was
				// most of the packing time.
				qs := dst[quant+k*l.quants:]
				for q := range 4 {
					binary.LittleEndian.PutUint32(qs[64*q+4*i:], binary.LittleEndian.Uint32(blk[l.qs+4*q:]))
				}
				if l.qh < 0 {
					continue
				}
				fifth := fifthBytes(binary.LittleEndian.Uint32(blk[l.qh:]))
				binary.LittleEndian.PutUint32(qs[256+4*i:], binary.LittleEndian.Uint32(fifth[:]))
			}
		}
	}
	return p
}

// fifthBytes lays out a Q5 block's fifth bits qh (bit v that of value v)
// as the packed groups hold them: bit q of byte j is value 4q+j's, bit
// 4+q value 16+4q+j's. Of x = qh>>j, bits 0, 4, 8 and 12 are those of
// values j, 4+j, 8+j and 12+j; times 0x1248 (shifted by 12, 9, 6 and 3)
// they land on bits 12-15 in order, the other fifteen products on other
// bits, all distinct, so no carry disturbs them. The high half likewise.
func fifthBytes(qh uint32) (b [4]byte) {
	for j := range 4 {
		x := qh >> j & 0x11111111
		b[j] = byte((x&0xffff)*0x1248>>12&0x0f | (x>>16)*0x1248>>8&0xf0)
	}
	return b
}

// packedRowsGo is the product of rows [lo,hi) over packed weights in plain
// Go, lane by lane as the assembly computes it: the reference the packing
// is tested against on every machine (the avx512 kernels are tested
// against the row-major products on the machines that have them). Its
// integer sums are the row-major products' (exact, whatever the order)
// and its float operations are dot_int.go's, in the same order.
func packedRowsGo(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) {
	p := packedOf(w)
	nb := w.Cols / Q8Block
	for r := lo; r < hi; r++ {
		g, i := r/packRows, r%packRows
		grp := p.data[g*p.group : (g+1)*p.group]
		for b := range batch {
			if intFormat(w.Type) == actQ8K {
				nk := w.Cols / QK_K
				xk := act.q8k[b*nk : (b+1)*nk]
				switch w.Type {
				case Q4_K:
					out[b*w.Rows+r] = packedQ4_KLane(grp, i, xk)
				case Q5_K:
					out[b*w.Rows+r] = packedQ5_KLane(grp, i, xk)
				case Q6_K:
					out[b*w.Rows+r] = packedQ6_KLane(grp, i, xk)
				case Q3_K:
					out[b*w.Rows+r] = packedQ3_KLane(grp, i, xk)
				case Q2_K:
					out[b*w.Rows+r] = packedQ2_KLane(grp, i, xk)
				}
				continue
			}
			xa := act.q8[b*nb : (b+1)*nb]
			var s float32
			for k := range nb {
				a := &xa[k]
				if w.Type == Q8_0 {
					qs := grp[p.quant+k*Q8Block*packRows:]
					is := -128 * a.sum
					for q := range Q8Block / 4 {
						for j := range 4 {
							is += int32(qs[64*q+4*i+j]) * int32(a.qs[4*q+j])
						}
					}
					s += float32(is) * (half(grp[k*2*packRows+2*i:]) * a.d)
					continue
				}
				l := nibbleLayoutOf(w.Type)
				qs := grp[p.quant+k*l.quants:]
				is := -l.offset * a.sum
				for v := range Q8Block {
					is += int32(packedNibble(qs, l.qh >= 0, i, v)) * int32(a.qs[v])
				}
				sc := grp[k*l.scales:]
				if l.min {
					s += float32(is)*(half(sc[2*i:])*a.d) + half(sc[32+2*i:])*(float32(a.sum)*a.d)
				} else {
					s += float32(is) * (half(sc[2*i:]) * a.d)
				}
			}
			out[b*w.Rows+r] = s
		}
	}
}

// packedNibble is the unsigned quant of value v (0..31) of lane i in a
// packed nibble block qs, its fifth bit added when five.
func packedNibble(qs []byte, five bool, i, v int) byte {
	q, j := v%16/4, v%4
	b := qs[64*q+4*i+j]
	bit := q
	if v < 16 {
		b &= 15
	} else {
		b >>= 4
		bit += 4
	}
	if five {
		b |= qs[256+4*i+j] >> bit & 1 << 4
	}
	return b
}

// packedQ4_KLane is lane i of a packed Q4_K group against one activation
// row: per half sub-block (16 weights, four columns), the nibbles' sum
// (it fits an int16: 16*15*127) times the sub-block's scale, as the
// kernels' VPDPWSSD takes it; the mins against the activation's sums of
// 16 as ordered pairs, one VPDPWSSD a sub-block.
func packedQ4_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q4KPackBlock : (k+1)*q4KPackBlock]
		var isum int32
		for j := range 4 {
			sc0, sc1 := int32(blk[64+16*(2*j)+i]), int32(blk[64+16*(2*j+1)+i])
			for h := range 2 {
				var lo, hi int32
				for c := 4 * h; c < 4*h+4; c++ {
					for t := range 4 {
						q := blk[320+64*(8*j+c)+4*i+t]
						lo += int32(q&15) * int32(a.qs[64*j+4*c+t])
						hi += int32(q>>4) * int32(a.qs[64*j+32+4*c+t])
					}
				}
				isum += sc0*lo + sc1*hi
			}
		}
		s += kDminTerms(blk, i, a, isum)
	}
	return s
}

// kDminTerms is a packed Q4_K or Q5_K super-block's contribution to lane
// i, given its scaled sum isum: d*dx*isum less dmin*dx times the mins
// against the activation's sums of 16, in dot_int.go's order.
func kDminTerms(blk []byte, i int, a *q8KAct, isum int32) float32 {
	var imin int32
	for s := range 8 {
		imin += int32(blk[192+16*s+i]) * (int32(a.bsums[2*s]) + int32(a.bsums[2*s+1]))
	}
	return half(blk[2*i:])*a.d*float32(isum) - half(blk[32+2*i:])*a.d*float32(imin)
}

// packedQ5_KLane is lane i of a packed Q5_K group against one activation
// row: per sub-block (32 weights of 0..31: its sum needs 17 bits), the sum
// of q*x times the scale in int32, as the kernels' VPMULLD; the mins as
// Q4_K's.
func packedQ5_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q5KPackBlock : (k+1)*q5KPackBlock]
		var isum int32
		for j := range 4 {
			var lo, hi int32
			for c := range 8 {
				for t := range 4 {
					q, h := blk[832+64*(8*j+c)+4*i+t], blk[320+64*c+4*i+t]
					lo += int32(q&15|h>>j&16) * int32(a.qs[64*j+4*c+t])
					hi += int32(q>>4|h<<(4-j)&16) * int32(a.qs[64*j+32+4*c+t])
				}
			}
			isum += int32(blk[64+16*(2*j)+i])*lo + int32(blk[64+16*(2*j+1)+i])*hi
		}
		s += kDminTerms(blk, i, a, isum)
	}
	return s
}

// packedQ6_KLane is lane i of a packed Q6_K group against one activation
// row: per sub-block of 16, the sum of q*x starting from -32 times the
// activation's sum (so that it is the sum of (q-32)*x), times the scale.
func packedQ6_KLane(grp []byte, i int, xa []q8KAct) float32 {
	var s float32
	for k := range xa {
		a := &xa[k]
		blk := grp[k*q6KPackBlock : (k+1)*q6KPackBlock]
		var isum int32
		for sb := range 16 {
			qs := blk[320+192*sb:]
			is := -32 * int32(a.bsums[sb])
			for t := range 4 {
				b0, b1, b2 := qs[4*i+t], qs[64+4*i+t], qs[128+4*i+t]
				w3 := b0>>6 | b1>>6<<2 | b2>>6<<4
				x := a.qs[16*sb+t:]
				is += int32(b0&63)*int32(x[0]) + int32(b1&63)*int32(x[4]) + int32(b2&63)*int32(x[8]) + int32(w3)*int32(x[12])
			}
			isum += int32(int8(blk[16*sb+i])) * is
		}
		s += half(blk[256+2*i:]) * a.d * float32(isum)
	}
	return s
}

// packF32 and packHalves lay out an F32 matrix, or the two-byte words of
// an F16 or BF16 one (as stored), in pack.go's float layout: group g's
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
