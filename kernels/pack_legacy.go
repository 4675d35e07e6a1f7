package kernels

import "encoding/binary"

func packQ8_0(m *Matrix, buf []byte) *packed {
	nb := m.Cols / Q8Block
	p := newPacked(m, buf)
	quant := p.quant
	var rows [packRows][]byte
	for g := range len(p.data) / p.group {
		dst := p.data[g*p.group : (g+1)*p.group]
		m.groupRows(&rows, g)
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

// nibbleLayout is where a legacy 4- or 5-bit type keeps its fields in its
// row-major blocks (its packed scales and quants are its laneLayout).
type nibbleLayout struct {
	min    bool  // a half m at 2 of the block (the _1 types), packed at 32 of a block's scales
	qh     int   // offset of the 32 fifth bits in the block, or -1 (the 4-bit types)
	qs     int   // offset of the 16 nibble bytes in the block
	offset int32 // what the unsigned quant exceeds the weight by
	typ    DType
}

// The legacy 4- and 5-bit types' layouts.
var (
	q4_0Nibbles = nibbleLayout{qh: -1, qs: 2, offset: 8, typ: Q4_0}
	q5_0Nibbles = nibbleLayout{qh: 2, qs: 6, offset: 16, typ: Q5_0}
	q4_1Nibbles = nibbleLayout{min: true, qh: -1, qs: 4, typ: Q4_1}
	q5_1Nibbles = nibbleLayout{min: true, qh: 4, qs: 8, typ: Q5_1}
)

// pack lays out a matrix of l's type.
func (l nibbleLayout) pack(m *Matrix, buf []byte) *packed {
	lanes := types[l.typ].lanes
	_, size, _ := m.Type.Block()
	nb := m.Cols / Q8Block
	p := newPacked(m, buf)
	var rows [packRows][]byte
	for g := range len(p.data) / p.group {
		dst := p.data[g*p.group : (g+1)*p.group]
		m.groupRows(&rows, g)
		for k := range nb { // block by block, as packQ8_0
			for i, row := range rows {
				blk := row[k*size : (k+1)*size]
				sc := dst[k*lanes.scales:]
				sc[2*i], sc[2*i+1] = blk[0], blk[1]
				if l.min {
					sc[32+2*i], sc[32+2*i+1] = blk[2], blk[3]
				}
				// Four-byte words, not copy: a memmove call per word was
				// most of the packing time.
				qs := dst[p.quant+k*lanes.quants:]
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

// groupRows points rows, lane by lane, at the row-major rows of group g.
func (m *Matrix) groupRows(rows *[packRows][]byte, g int) {
	rb := m.rowBytes()
	for i := range rows {
		rows[i] = m.Raw[packRow(m, g, i)*rb:][:rb]
	}
}
