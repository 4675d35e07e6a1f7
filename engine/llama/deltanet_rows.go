package llama

import (
	"math"

	"github.com/kiln-ai/kiln/kernels"
)

// The per-row work of the Gated DeltaNet mixer around its products and
// its delta rule: the causal convolution, SiLU, the query and key
// normalisation and the gates before the delta rule, the gated RMSNorm
// after it. A prefill step's rows are many, so this work runs on the
// pool (the convolution split by channels, the rest by rows); a row's
// arithmetic is the same whichever task or step runs it, so its result
// does not depend on the rows that share its step.

// rowWork is the number of values below which a step's per-row work
// stays on the calling goroutine (a decode step's few rows).
const rowWork = 1 << 15

// convBlock is the number of channels a convolution task takes at a time:
// a run of rows is walked once per block, so a block is many cache lines
// of a row (16 channels, one line, made the walk a TLB miss per row).
const convBlock = 256

// prepRows convolves the step's projections (s.lin.qkv, in place, the
// runs planned) with each slot's window and shifts the inputs into it,
// then applies SiLU, normalises the query and key heads and turns b and a
// into the gates, for the linear layer li of weights d.
func (s *State) prepRows(d *DeltaNet, rows []Row, li int) {
	sc := &s.lin
	ls := s.m.Config.Linear
	for _, run := range sc.runs {
		r := rows[run.first]
		s.recState(r.Slot, li, r.Pos) // a new sequence's state starts at zero
	}
	sc.d, sc.rows, sc.li = d, rows, li
	blocks := (ls.ConvDim() + convBlock - 1) / convBlock
	if n := len(rows); n*ls.ConvDim() < rowWork || s.attParts == 1 {
		s.convPart(0, blocks)
		s.rowPart(0, n)
	} else {
		s.pool.Run(blocks, sc.convFn)
		s.pool.Run(n, sc.rowFn)
	}
	sc.d, sc.rows = nil, nil
}

// convPart convolves the channel blocks [lo, hi) of every run of the step.
func (s *State) convPart(lo, hi int) {
	sc := &s.lin
	ls := s.m.Config.Linear
	cd := ls.ConvDim()
	for b := lo; b < hi; b++ {
		c0, c1 := b*convBlock, min((b+1)*convBlock, cd)
		for _, run := range sc.runs {
			win, _ := s.recState(sc.rows[run.first].Slot, sc.li, -1)
			convRun(sc.d.Conv, ls.ConvKernel, cd, win, sc.qkv, run, c0, c1)
		}
	}
}

// convRun convolves channels [c0, c1) of a run's rows of qkv (rows of cd
// channels) in place with the k taps per channel of w, the run's earlier
// inputs coming from win (the slot's last k-1 inputs, oldest first), and
// leaves the run's last k-1 inputs in win. It goes from the last row to
// the first, so that every row's earlier inputs are still unconvolved
// when it is computed; each output is the sum, in tap order, that the
// recurrent form (one row at a time) gives.
func convRun(w []float32, k, cd int, win, qkv []float32, run linRun, c0, c1 int) {
	width := c1 - c0
	src := func(t int) []float32 { // input t of the run, t < 0 from the window
		if t >= 0 {
			return qkv[(run.first+t)*cd+c0 : (run.first+t)*cd+c1]
		}
		j := k - 1 + t
		return win[j*cd+c0 : j*cd+c1]
	}
	var save [15 * convBlock]float32
	for j := range k - 1 {
		copy(save[j*width:(j+1)*width], src(run.n-(k-1)+j))
	}
	var in [15][]float32
	for t := run.n - 1; t >= 0; t-- {
		for j := range k - 1 {
			in[j] = src(t - (k - 1) + j)
		}
		out := qkv[(run.first+t)*cd+c0 : (run.first+t)*cd+c1]
		ws := w[c0*k : c1*k]
		if k == 4 {
			a, b, e := in[0][:len(out)], in[1][:len(out)], in[2][:len(out)]
			for c := range out {
				wc := ws[4*c : 4*c+4 : 4*c+4]
				var y float32
				y += wc[0] * a[c]
				y += wc[1] * b[c]
				y += wc[2] * e[c]
				y += wc[3] * out[c]
				out[c] = y
			}
			continue
		}
		for c := range out {
			wc := ws[k*c : k*c+k]
			var y float32
			for j := range k - 1 {
				y += wc[j] * in[j][c]
			}
			y += wc[k-1] * out[c]
			out[c] = y
		}
	}
	for j := range k - 1 {
		copy(win[j*cd+c0:j*cd+c1], save[j*width:(j+1)*width])
	}
}

// rowPart finishes rows [lo, hi) of the step's convolved projections:
// SiLU, the query and key heads L2-normalised (the queries also scaled
// by 1/sqrt(KeyDim)), and the gates.
func (s *State) rowPart(lo, hi int) {
	sc := &s.lin
	ls := s.m.Config.Linear
	cd, vh, qk, dk := ls.ConvDim(), ls.ValueHeads, ls.QKDim(), ls.KeyDim
	scale := float32(1 / math.Sqrt(float64(dk)))
	for i := lo; i < hi; i++ {
		x := sc.qkv[i*cd : (i+1)*cd]
		kernels.SiLU(x)
		for h := 0; h < 2*qk; h += dk {
			v := x[h : h+dk]
			l2norm(v)
			if h < qk {
				for j := range v {
					v[j] *= scale
				}
			}
		}
		s.gates(sc.d, sc.b[i*vh:(i+1)*vh], sc.a[i*vh:(i+1)*vh])
	}
}

// gatedNorm applies the gated RMSNorm to the delta rule's output of the
// step's n rows (s.lin.o): each head's RMSNorm times silu(z).
func (s *State) gatedNorm(d *DeltaNet, n int) {
	sc := &s.lin
	sc.d = d
	if n*s.m.Config.Linear.VDim() < rowWork || s.attParts == 1 {
		s.normPart(0, n)
	} else {
		s.pool.Run(n, sc.normFn)
	}
	sc.d = nil
}

// normPart is gatedNorm of rows [lo, hi).
func (s *State) normPart(lo, hi int) {
	c := s.m.Config
	ls := c.Linear
	sc := &s.lin
	vDim, dv := ls.VDim(), ls.ValueDim
	for i := lo; i < hi; i++ {
		for h := range ls.ValueHeads {
			oh := sc.o[i*vDim+h*dv : i*vDim+(h+1)*dv]
			zh := sc.z[i*vDim+h*dv : i*vDim+(h+1)*dv]
			kernels.RMSNorm(oh, oh, sc.d.Norm, c.NormEps)
			kernels.SiLU(zh)
			for j, g := range zh {
				oh[j] *= g
			}
		}
	}
}
