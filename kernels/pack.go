package kernels

import (
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
// Each group starts on a 64-byte boundary, so every quant load is one
// cache line.

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
// once, after loading: on the avx512 path a Q8_0 matrix gets a packed copy
// (as many bytes again as its weights) that products on that path read
// instead of the row-major blocks. Elsewhere, and for the other types, it
// does nothing. It must run before the matrices are shared by concurrent
// products, and their data must not change afterwards. The work is spread
// over GOMAXPROCS goroutines.
func Prepare(ms ...*Matrix) {
	if best < pathAVX512 {
		return
	}
	prepare(ms)
}

// prepare packs ms whatever this CPU runs (the packing is plain Go; tests
// check it on every machine against the row-major product).
func prepare(ms []*Matrix) {
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
		// seen first: a matrix listed twice (a tied classifier) may be
		// in a worker's hands, its pk being written, by its second turn.
		if m == nil || seen[m] {
			continue
		}
		seen[m] = true
		if m.pk == nil && packable(m.Type) {
			work <- m
		}
	}
	close(work)
	wg.Wait()
}

// packable reports whether Prepare packs matrices of type t.
func packable(t DType) bool { return t == Q8_0 }

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
	for g := range len(p.data) / p.group {
		dst := p.data[g*p.group : (g+1)*p.group]
		for i := range packRows {
			row := m.Raw[packRow(m, g, i)*rb:][:rb]
			for k := range nb {
				blk := row[k*Q8BlockBytes : (k+1)*Q8BlockBytes]
				copy(dst[k*2*packRows+2*i:], blk[:2])
				qs := dst[quant+k*Q8Block*packRows:]
				for q := range Q8Block / 4 {
					for j := range 4 {
						qs[64*q+4*i+j] = blk[2+4*q+j] ^ 0x80
					}
				}
			}
		}
	}
	return p
}

// packedRowsGo is the product of rows [lo,hi) over packed weights in plain
// Go, lane by lane as the assembly computes it: the reference the packing
// is tested against on every machine (the avx512 kernels are tested
// against the row-major products on the machines that have them).
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
				qs := grp[p.quant+k*Q8Block*packRows:]
				is := -128 * a.sum
				for q := range Q8Block / 4 {
					for j := range 4 {
						is += int32(qs[64*q+4*i+j]) * int32(a.qs[4*q+j])
					}
				}
				s += float32(is) * (half(grp[k*2*packRows+2*i:]) * a.d)
			}
			out[b*w.Rows+r] = s
		}
	}
}
