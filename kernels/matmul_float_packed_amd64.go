//go:build amd64 && !purego

package kernels

import "unsafe"

// Blocking of the packed float products (floatRowsPacked).
const (
	// pMaxAct is the most activation rows one kernel call takes; a batch
	// of up to pMaxAct4 meets four groups a call, a wider one two.
	pMaxAct  = 12
	pMaxAct4 = 3

	// pChunk is the bytes of one group's weights per column chunk of a
	// batch of more than pMaxAct rows (16 KiB: 256 F32 columns, 512 F16
	// or BF16), so that two groups' chunk stays in L1 while the batch's
	// activation blocks meet it. 8, 16, 32 KiB and whole rows measured
	// alike on the stories and 4096x4096 shapes (within 5%, batches 16
	// and 64); the chunk bounds what a block re-reads on wider rows.
	pChunk = 16 << 10

	// pAhead is how far ahead in each group's weights a call prefetches
	// (32 F32 columns, 64 F16). Against the row-major tiles on 4096x4096
	// (weights from memory), one and eight activation rows: F32 0.98x and
	// 0.96x without prefetch, 1.06x and 1.15x with 2 KiB (4 KiB alike);
	// F16 0.91x and 1.04x, 1.07x and 1.31x; no difference on matrices
	// that stay in cache. The blocks after a chunk's first prefetch their
	// own lines (in cache by then): having every block prefetch the whole
	// next chunk instead ran 0.88-0.96x as fast (F32 2048x768, 768x2048,
	// 4096x4096, batches 16 and 64).
	pAhead = 2 << 10
)

// floatRowsPacked runs rows [lo,hi) of an F32, F16 or BF16 product over
// w's packed copy with the avx512 kernels, the batch in near-equal blocks
// of at most twelve activation rows: a batch of one to three (decode)
// meets four groups (64 rows) a call, so that a call has four to twelve
// independent FMA chains, a wider one two groups (32 rows), each block
// meeting the groups' weights column by column. A batch of more than
// twelve walks the columns in chunks of pChunk bytes a group so that the
// blocks after the first find the chunk in L1; the first block of each
// chunk prefetches pAhead bytes ahead in each group's weights (into the
// next chunk, and past a group's end into the next group's, which
// follows it in memory). A group cut by lo
// or hi, or by the end of the matrix, is computed whole and stored
// through a lane mask; the range's last groups run on the kernels of
// fewer groups. false means w has no packed copy (or the CPU has no
// AVX-512) and the caller must use another kernel.
func floatRowsPacked(out []float32, w *Matrix, x []float32, batch, lo, hi int) bool {
	p := packedOf(w)
	if p == nil || !haveAVX512 {
		return false
	}
	var col int // bytes of one packed column of a group
	switch w.Type {
	case F32:
		col = packRows * 4
	case F16, BF16:
		col = packRows * 2
	default:
		return false
	}
	if lo >= hi || batch <= 0 {
		return true
	}
	k := pKernel(w.Type)
	cols, rows := w.Cols, w.Rows
	_, _ = x[batch*cols-1], out[(batch-1)*rows+hi-1]
	gs, xs, ostride := uintptr(p.group), uintptr(cols)*4, uintptr(rows)*4
	blocks := (batch + pMaxAct - 1) / pMaxAct
	chunk, step := cols, 2
	if batch <= pMaxAct4 {
		step = 4
	}
	if blocks > 1 {
		chunk = pChunk / col
	}
	g1 := (hi + packRows - 1) / packRows
	for g := lo / packRows; g < g1; {
		ng := step
		for ng > g1-g {
			ng /= 2
		}
		masks := laneMask(g, lo, hi) | laneMask(g+ng-1, lo, hi)<<16
		o := g * packRows
		for c0 := 0; c0 < cols; c0 += chunk {
			n, add := min(chunk, cols-c0), min(c0, 1)
			// The prefetch address stays inside the packed copy (Go's
			// pointer checks refuse one past an allocation's end).
			at := g*p.group + c0*col
			wc := unsafe.Pointer(&p.data[at])
			pf := unsafe.Pointer(&p.data[min(at+pAhead, len(p.data)-1)])
			b := 0
			for i := range blocks {
				a := (batch - b) / (blocks - i)
				k.call(ng, a, wc, gs, pf, &x[b*cols+c0], xs, n, &out[b*rows+o], ostride, masks, add)
				b += a
				pf = wc
			}
		}
		g += ng
	}
	return true
}

// laneMask is the lanes of group g that hold rows of [lo,hi).
func laneMask(g, lo, hi int) int {
	r0 := g * packRows
	first, end := max(lo, r0)-r0, min(hi, r0+packRows)-r0
	return (1<<end - 1) &^ (1<<first - 1)
}
