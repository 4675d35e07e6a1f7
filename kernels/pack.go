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
// byte, where a mask of 0x10 bytes picks it. Each group starts on a
// 64-byte boundary, so every quant load is one cache line.

// packRows is the number of rows a group of packed weights interleaves:
// one per 32-bit lane of a 512-bit register.
const packRows = 16

// packed is a matrix's weights laid out in groups of packRows rows.
type packed struct {
	src   *byte  // the row-major data it was made from (Matrix.Raw)
	data  []byte // groups, each starting on a 64-byte boundary
	group int    // bytes per group
	quant int    // bytes from a group's start to its quants
}

// packedOf is m's packed copy, or nil when it has none or when m is a copy
// of a prepared Matrix given other data since.
func packedOf(m *Matrix) *packed {
	if p := m.pk; p != nil && p.src == unsafe.SliceData(m.Raw) {
		return p
	}
	return nil
}

// groupAt is the address of group g.
func (p *packed) groupAt(g int) unsafe.Pointer {
	return unsafe.Pointer(&p.data[g*p.group])
}

// Prepare lays out each matrix's weights for this CPU's fastest kernels,
// once, after loading: on the avx512 path a Q8_0, Q4_0, Q5_0, Q4_1 or
// Q5_1 matrix gets a packed copy (as many bytes again as its weights, but
// for padding) that products on that path read instead of the row-major
// blocks; on the avxvnni path a Q8_0 one. Elsewhere, and for the other
// types, it does nothing. It must run before the matrices are shared by
// concurrent products, and their data must not change afterwards. The
// work is spread over GOMAXPROCS goroutines.
func Prepare(ms ...*Matrix) {
	if best < pathAVXVNNI {
		return
	}
	prepare(ms, best)
}

// prepare packs the matrices of ms whose type path p has packed kernels
// for, whatever this CPU runs (the packing is plain Go; tests check it on
// every machine against the row-major product).
func prepare(ms []*Matrix, p kpath) {
	work := make(chan *Matrix)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ms)) {
		wg.Go(func() {
			for m := range work {
				m.pk = pack(m)
			}
		})
	}
	seen := make(map[*Matrix]bool, len(ms))
	for _, m := range ms {
		if m != nil && m.pk == nil && packsFor(p, m.Type) && !seen[m] {
			seen[m] = true
			work <- m
		}
	}
	close(work)
	wg.Wait()
}

// packable reports whether Prepare packs matrices of type t on the avx512
// path.
func packable(t DType) bool {
	switch t {
	case Q8_0, Q4_0, Q5_0, Q4_1, Q5_1:
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

// pack builds the packed copy of a valid matrix of a packable type.
func pack(m *Matrix) *packed {
	switch m.Type {
	case Q8_0:
		return packQ8_0(m)
	case Q4_0, Q5_0, Q4_1, Q5_1:
		return packNibbles(m)
	}
	return nil
}

// newPacked allocates groups of group bytes for m's rows, 64-byte aligned.
func newPacked(m *Matrix, group, quant int) *packed {
	groups := (m.Rows + packRows - 1) / packRows
	buf := make([]byte, groups*group+63)
	off := int(-uintptr(unsafe.Pointer(&buf[0])) & 63)
	return &packed{src: unsafe.SliceData(m.Raw), data: buf[off : off+groups*group], group: group, quant: quant}
}

// packRow is the row that lane i of group g holds.
func packRow(m *Matrix, g, i int) int { return min(g*packRows+i, m.Rows-1) }

func packQ8_0(m *Matrix) *packed {
	nb := m.Cols / Q8Block
	quant := (nb*2*packRows + 63) &^ 63
	p := newPacked(m, quant+nb*Q8Block*packRows, quant)
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

func packNibbles(m *Matrix) *packed {
	l := nibbleLayoutOf(m.Type)
	_, size, _ := m.Type.Block()
	nb := m.Cols / Q8Block
	quant := (nb*l.scales + 63) &^ 63
	p := newPacked(m, quant+nb*l.quants, quant)
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
