package kernels

import "encoding/binary"

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
