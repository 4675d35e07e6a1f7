package train

import (
	"unsafe"

	"github.com/kiln-ai/kiln/kernels"
)

// is32 reports whether F is float32, the type the SIMD kernels take.
func is32[F float]() bool {
	var z F
	return unsafe.Sizeof(z) == 4
}

// as32 views a float32 slice of type []F as []float32; callers check is32.
func as32[F float](a []F) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(a))), len(a))
}

// dot is the inner product of a and b (len(a) values).
func dot[F float](a, b []F) F {
	if is32[F]() {
		return F(kernels.Dot(as32(a), as32(b)))
	}
	var s F
	b = b[:len(a)]
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// axpy adds alpha·x to y.
func axpy[F float](alpha F, x, y []F) {
	if is32[F]() {
		kernels.Axpy(float32(alpha), as32(x), as32(y))
		return
	}
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// rowBlock is how many weight rows the transposed product dequantizes at a
// time.
const rowBlock = 128

// linalg runs the products with a frozen base matrix. scratch holds one
// block of dequantized rows (float32 and, for the reference path, F).
type linalg[F float] struct {
	pool *kernels.Pool
	row  []float32
	rowF []F
}

// matmul sets out[t] = W·x[t] for the n rows of x, as the serving forward
// computes it: float32 through the pool's kernels (quantized types with
// their integer products), float64 from the dequantized rows.
func (la *linalg[F]) matmul(out []F, w *kernels.Matrix, x []F, n int) {
	if is32[F]() {
		la.pool.MatMul(as32(out[:n*w.Rows]), w, as32(x[:n*w.Cols]), n)
		return
	}
	la.grow(w.Cols)
	for r := range w.Rows {
		row := la.rowOf(w, r, 0)
		for t := range n {
			out[t*w.Rows+r] = dot(row, x[t*w.Cols:(t+1)*w.Cols])
		}
	}
}

// matmulT adds Wᵀ·dy[t] to dx[t] for the n rows of dy, the rows of dx
// split over the pool. A float32 W is read in place with one dispatch for
// all its rows; another is dequantized a block of rows at a time, each
// block its own dispatch. Either way each value of dx sums its terms in
// the order of W's rows. (A step's units make many small products, and
// every dispatch waits for its slowest worker: on a loaded machine one
// dispatch a block cost float32 a third of the backward at 16 rows.)
func (la *linalg[F]) matmulT(dx []F, w *kernels.Matrix, dy []F, n int) {
	if is32[F]() && w.Type == kernels.F32 {
		la.pool.Run(n, func(t0, t1 int) {
			for lo := 0; lo < w.Rows; lo += rowBlock {
				hi := min(lo+rowBlock, w.Rows)
				la.matmulTRows(dx, w, dy, t0, t1, lo, hi, func(r int) []F { return la.rowOf(w, r, 0) })
			}
		})
		return
	}
	la.grow(rowBlock * w.Cols)
	rows := make([][]F, 0, rowBlock)
	for lo := 0; lo < w.Rows; lo += rowBlock {
		hi := min(lo+rowBlock, w.Rows)
		rows = rows[:0]
		for r := lo; r < hi; r++ {
			rows = append(rows, la.rowOf(w, r, r-lo))
		}
		la.pool.Run(n, func(t0, t1 int) {
			la.matmulTRows(dx, w, dy, t0, t1, lo, hi, func(r int) []F { return rows[r-lo] })
		})
	}
}

// matmulTRows adds rows [lo, hi) of W's part of Wᵀ·dy[t] to dx[t] for t
// in [t0, t1), row(r) giving row r of W.
func (la *linalg[F]) matmulTRows(dx []F, w *kernels.Matrix, dy []F, t0, t1, lo, hi int, row func(int) []F) {
	cols := w.Cols
	for t := t0; t < t1; t++ {
		d, g := dx[t*cols:(t+1)*cols], dy[t*w.Rows:(t+1)*w.Rows]
		for r := lo; r < hi; r++ {
			if c := g[r]; c != 0 {
				axpy(c, row(r), d)
			}
		}
	}
}

// grow makes the row scratch hold n values.
func (la *linalg[F]) grow(n int) {
	if len(la.row) < n {
		la.row = make([]float32, n)
		if !is32[F]() {
			la.rowF = make([]F, n)
		}
	}
}

// rowOf returns row r of w as []F, dequantized into slot k of the scratch
// unless w is float32 already (then it aliases w).
func (la *linalg[F]) rowOf(w *kernels.Matrix, r, k int) []F {
	c := w.Cols
	if is32[F]() {
		if w.Type == kernels.F32 {
			f := w.F32[r*c : (r+1)*c]
			return unsafe.Slice((*F)(unsafe.Pointer(unsafe.SliceData(f))), c)
		}
		dst := la.row[k*c : (k+1)*c]
		kernels.DequantRow(dst, w, r)
		return unsafe.Slice((*F)(unsafe.Pointer(unsafe.SliceData(dst))), c)
	}
	tmp := la.row[:c]
	kernels.DequantRow(tmp, w, r)
	dst := la.rowF[k*c : (k+1)*c]
	for i, v := range tmp {
		dst[i] = F(v)
	}
	return dst
}
