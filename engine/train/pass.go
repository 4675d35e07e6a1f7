package train

// A pass over one sequence (its forward, the classifier's loss and its
// gradient, the backward) is cut into units: bounded pieces of work that
// keep all their state in the activations and gradient buffers, so that a
// caller may stop between any two of them and resume later. Every pass, a
// sliced step or not, runs the same units in the same order: the unit plan
// depends only on the model's shape, the targets and the sequence length,
// never on time or a budget, so slicing changes when the work is done and
// nothing of what is computed (the kernels' float32 results may depend on
// a product's row count, so the row chunks themselves must not move).

// phase is the kind of work of a unit.
type phase uint8

const (
	phEmbed     phase = iota // the token embeddings, layer 0's input
	phForward                // a chunk of rows of one layer's forward
	phLoss                   // a chunk of target rows of the classifier
	phFFNBack                // rows of a layer's feed-forward and output-projection backward
	phAttnBack               // query rows of a layer's attention backward
	phQKVBack                // rows of a layer's q, k, v projections' backward
	phDeltaBack              // a checkpoint block of a linear layer's delta rule, backward in time
	phLinBack                // rows of a linear layer's input projections' backward
	phUpdate                 // the optimizer update (StepRun only)
	numPhases
)

// unitWork is the work a unit aims at, in the dense multiply-adds of work's
// estimates: about 10 ms on two cores, small against a slice of tens of
// milliseconds and large enough that a chunk's products still read each
// weight for many rows. (Units of half this size made kiln-tiny's step at
// 1024 tokens cost 9% more CPU time than whole layers; this size, 3%.)
const unitWork = 1 << 28

// minChunk is the fewest rows in a chunk of a layer (unless the sequence
// is shorter), a multiple of the kernels' row blocks. The classifier's
// units are lossChunk rows at least: its products cost half as much again
// a row in groups of 4 rows as of 16 (the output matrix stays in no cache),
// so its units, the longest of a step, stay at that size.
const minChunk = 32

// span is the rows [lo, hi) of a sequence (for phLoss, of its target rows).
type span struct{ lo, hi int }

func (s span) n() int { return s.hi - s.lo }

// rowsOf is rows s of v, a matrix of rows of width w.
func rowsOf[F any](v []F, s span, w int) []F { return v[s.lo*w : s.hi*w] }

// unit is one bounded piece of a pass: phase ph over rows s of layer l.
type unit struct {
	ph   phase
	l    int
	s    span
	work int64 // its estimated cost (work), to predict its time
}

// pass is one sequence's pass cut into units, run in order by step.
type pass[F float] struct {
	nt    *net[F]
	ids   []int
	rows  []int // the target rows: positions t whose next token is a target
	units []unit
	back  bool    // whether the pass computes gradients
	at    int     // the next unit
	loss  float64 // the mean cross-entropy, complete after the last phLoss unit
}

// begin plans a pass over ids, sizing the buffers; it computes nothing.
// With target nil the pass is the forward alone; with back false it stops
// after the loss.
func (nt *net[F]) begin(ids []int, target []bool, back bool) *pass[F] {
	c, n := nt.c, len(ids)
	nt.a.grow(c, nt.w, n, nt.block())
	nt.rope.grow(c, nt.m.RopeFactors, n)
	nt.bs.grow(nt, n)
	nt.att.grow(c.Heads, n)
	if c.Hybrid() && len(nt.lu) == 0 {
		nt.lu = make([]F, c.Linear.VDim())
	}
	pa := &pass[F]{nt: nt, ids: ids, rows: nt.rows[:0], units: nt.units[:0], back: back}
	for t := 0; t+1 < len(target); t++ {
		if target[t+1] {
			pa.rows = append(pa.rows, t)
		}
	}
	pa.add(phEmbed, 0, span{0, n})
	for l := range c.Layers {
		pa.chunks(phForward, l, n)
	}
	if len(pa.rows) > 0 {
		pa.chunks(phLoss, 0, len(pa.rows))
		for l := c.Layers - 1; back && l >= 0; l-- {
			pa.chunks(phFFNBack, l, n)
			if c.IsLinear(l) {
				pa.deltaBlocks(l, n)
				pa.chunks(phLinBack, l, n)
				continue
			}
			pa.chunks(phAttnBack, l, n)
			pa.chunks(phQKVBack, l, n)
		}
	}
	nt.rows, nt.units = pa.rows, pa.units // reused by the next pass
	return pa
}

// chunks adds the units of phase ph of layer l over rows [0, n).
func (pa *pass[F]) chunks(ph phase, l, n int) {
	k := pa.nt.chunkRows(ph, l, len(pa.ids))
	for lo := 0; lo < n; lo += k {
		pa.add(ph, l, span{lo, min(lo+k, n)})
	}
}

// deltaBlocks adds the delta-rule backward units of linear layer l: one a
// checkpoint block, the last block first. The recurrence runs backward in
// time through the whole layer, so its units are sequential.
func (pa *pass[F]) deltaBlocks(l, n int) {
	k := pa.nt.block()
	for b := ckBlocks(n, k) - 1; b >= 0; b-- {
		pa.add(phDeltaBack, l, span{b * k, min((b+1)*k, n)})
	}
}

func (pa *pass[F]) add(ph phase, l int, s span) {
	pa.units = append(pa.units, unit{ph: ph, l: l, s: s, work: pa.nt.work(ph, l, s)})
}

// done reports whether every unit has run.
func (pa *pass[F]) done() bool { return pa.at >= len(pa.units) }

func (pa *pass[F]) peek() unit { return pa.units[pa.at] }

// finish runs the remaining units.
func (pa *pass[F]) finish() {
	for !pa.done() {
		pa.step()
	}
}

// step runs the next unit.
func (pa *pass[F]) step() {
	nt, u := pa.nt, pa.units[pa.at]
	pa.at++
	last := u.l == nt.c.Layers-1
	switch u.ph {
	case phEmbed:
		nt.embed(pa.ids)
		if pa.back {
			nt.g.each(func(p []F) { clear(p) })
		}
	case phForward:
		nt.layerForward(u.l, u.s)
		if last {
			nt.finalNorm(u.s)
		}
	case phLoss:
		if u.s.lo == 0 {
			clear(nt.bs.dxf)
		}
		nt.lossRows(pa.ids, pa.rows, u.s, &pa.loss)
	case phFFNBack:
		if last {
			nt.finalNormBack(u.s)
		}
		nt.ffnBack(u.l, u.s)
	case phAttnBack:
		nt.attentionBack(&nt.a.layers[u.l], u.s)
	case phQKVBack:
		nt.qkvBack(u.l, u.s)
	case phDeltaBack:
		nt.deltaBack(u.l, u.s)
	case phLinBack:
		nt.linBack(u.l, u.s)
	}
}

// chunkRows is how many rows a unit of phase ph takes in a sequence of n
// tokens: unitWork over the phase's mean work a row, rounded down to a
// multiple of its least chunk. nt.chunk, when set (by tests), overrides it.
func (nt *net[F]) chunkRows(ph phase, l, n int) int {
	if nt.chunk > 0 {
		return nt.chunk
	}
	least := minChunk
	if ph == phLoss {
		least = lossChunk
	}
	per := max(nt.work(ph, l, span{0, n})/int64(max(n, 1)), 1)
	return max(least, int(unitWork/per)/least*least)
}

// Relative costs of a multiply-add, measured on two cores against the
// dense forward products: in the transposed products of the backward
// (Wᵀ·dy a row at a time), in attention (short dot products and updates
// of one head's width), and in the classifier (its product and transposed
// product both, over a matrix that stays in no cache).
const (
	costT       = 3
	costAttn    = 4
	costAttnBwd = 8
	costLoss    = 11
)

// work estimates the cost of phase ph of layer l over rows s, in dense
// multiply-adds: the base products, the LoRA products and attention's
// positions (row t attends to t+1 of them) or the delta rule's state
// updates, each weighted by its relative cost. It sizes the chunks; the
// slicer scales it by each phase's measured time per unit of work, so
// beyond that only its proportions within a phase need be right.
func (nt *net[F]) work(ph phase, l int, s span) int64 {
	c := nt.c
	n, q := int64(s.n()), int64(c.QDim())
	// Σ (t+1) over the rows: the attention positions.
	pos := (int64(s.hi)*int64(s.hi+1) - int64(s.lo)*int64(s.lo+1)) / 2
	ls := c.Linear
	state := int64(ls.ValueHeads * ls.KeyDim * ls.ValueDim)
	gates := 2 * int64(ls.ValueHeads) * int64(c.Dim)
	lin := c.IsLinear(l)
	switch {
	case ph == phEmbed:
		return n * int64(c.Dim)
	case ph == phForward && lin:
		return n*(nt.projWork(l, ModLinQKV, ModLinZ, ModLinOut, ModGate, ModUp, ModDown)+gates) + costAttn*3*n*state
	case ph == phForward:
		return n*nt.projWork(l, ModQ, ModK, ModV, ModO, ModGate, ModUp, ModDown) + costAttn*2*q*pos
	case ph == phLoss:
		return costLoss * n * int64(c.Vocab) * int64(c.Dim)
	case ph == phFFNBack && lin:
		return costT * n * nt.projWork(l, ModLinOut, ModGate, ModUp, ModDown)
	case ph == phFFNBack:
		return costT * n * nt.projWork(l, ModO, ModGate, ModUp, ModDown)
	case ph == phAttnBack:
		return costAttnBwd * 5 * q * pos
	case ph == phQKVBack:
		return costT * n * nt.projWork(l, ModQ, ModK, ModV)
	case ph == phDeltaBack:
		return costAttnBwd * 10 * n * state
	case ph == phLinBack:
		return costT * n * (nt.projWork(l, ModLinQKV, ModLinZ) + gates)
	}
	return 0
}

// projWork is the multiply-adds a row of the given projections of layer l
// costs, with their LoRA pairs where targeted.
func (nt *net[F]) projWork(l int, mods ...Module) int64 {
	var w int64
	for _, m := range mods {
		out, in := moduleShape(nt.c, m)
		w += int64(out) * int64(in)
		if nt.w.layers[l][m].A != nil {
			w += int64(nt.w.rank) * int64(in+out)
		}
	}
	return w
}
