package kernels

import "slices"

// quantAct holds a product's activation rows quantized for the integer
// products. A Pool owns one and grows it to the largest product it has
// run, so a steady-state product allocates nothing.
type quantAct struct {
	q8  []q8Act   // batch rows of cols/32 blocks, when a legacy type needs them
	q8k []q8KAct  // batch rows of cols/256 blocks, for the K-quants
	amx []amxRows // on the amx path: q8's scales and sums, sixteen rows a block
}

// amxRows are the scales and quant sums of one block of sixteen
// consecutive activation rows, as the amx kernel reads them.
type amxRows struct {
	d   [packRows]float32
	sum [packRows]int32
}

// fill quantizes batch rows of cols values of x to format f, on kernel
// path kp.
func (a *quantAct) fill(kp kpath, f actFormat, x []float32, batch, cols int) {
	switch f {
	case actQ8:
		n := batch * cols / Q8Block
		a.q8 = slices.Grow(a.q8[:0], n)[:n]
		if kp < pathAVX2 || !quantizeQ8ActArch(a.q8, x[:batch*cols]) {
			quantizeQ8Act(a.q8, x[:batch*cols])
		}
		if kp >= pathAMX {
			a.fillAMX(batch, cols/Q8Block)
		}
	case actQ8K:
		n := batch * cols / QK_K
		a.q8k = slices.Grow(a.q8k[:0], n)[:n]
		if !quantizeQ8KActArch(kp, a.q8k, x[:batch*cols]) {
			quantizeQ8KAct(a.q8k, x[:batch*cols])
		}
	}
}

// fillAMX gathers, for every whole set of sixteen rows of a.q8, each
// block's scales and sums into a.amx.
func (a *quantAct) fillAMX(batch, nb int) {
	sets := batch / packRows
	a.amx = slices.Grow(a.amx[:0], sets*nb)[:sets*nb]
	for s := range sets {
		for k := range nb {
			t := &a.amx[s*nb+k]
			for m := range packRows {
				q := &a.q8[(s*packRows+m)*nb+k]
				t.d[m], t.sum[m] = q.d, q.sum
			}
		}
	}
}

// matMulRowsOn runs rows [lo,hi) of a product on kernel path kp. With act
// (x already quantized by fill for w's format) a type that has an integer
// product uses it (on avx512 and avxvnni, over w's packed copy when
// Prepare made one);
// every other product reads x in float32.
func matMulRowsOn(kp kpath, out []float32, w *Matrix, x []float32, act *quantAct, batch, lo, hi int) {
	if act != nil && intFormat(w.Type) != actFloat {
		if kp >= pathAMX && intRowsAMX(out, w, act, batch, lo, hi) {
			return
		}
		if kp >= pathAVX512 && intRowsPacked(out, w, act, batch, lo, hi) {
			return
		}
		if kp == pathAVXVNNI && intRowsPackedVNNI(out, w, act, batch, lo, hi) {
			return
		}
		if kp >= pathAVX2 && intRowsArch(out, w, act, batch, lo, hi) {
			return
		}
		intRowsGeneric(out, w, act, batch, lo, hi)
		return
	}
	if kp >= pathAVX512 && (floatRowsPacked(out, w, x, batch, lo, hi) || floatRowsZ(out, w, x, batch, lo, hi)) {
		return
	}
	if kp >= pathAVX2 && matMulRowsArch(out, w, x, batch, lo, hi) {
		return
	}
	matMulRowsGeneric(out, w, x, batch, lo, hi)
}

// intRowsGeneric is the pure-Go integer product of rows [lo,hi).
func intRowsGeneric(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) {
	rb := w.rowBytes()
	switch intFormat(w.Type) {
	case actQ8:
		dot, nb := types[w.Type].dotQ8, w.Cols/Q8Block
		for r := lo; r < hi; r++ {
			raw := w.Raw[r*rb : (r+1)*rb]
			for b := range batch {
				out[b*w.Rows+r] = dot(raw, act.q8[b*nb:(b+1)*nb])
			}
		}
	case actQ8K:
		dot, nb := types[w.Type].dotQ8K, w.Cols/QK_K
		for r := lo; r < hi; r++ {
			raw := w.Raw[r*rb : (r+1)*rb]
			for b := range batch {
				out[b*w.Rows+r] = dot(raw, act.q8k[b*nb:(b+1)*nb])
			}
		}
	}
}
