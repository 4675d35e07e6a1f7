package llama

import (
	"math"

	"github.com/kiln-ai/kiln/kernels"
)

// The Gated DeltaNet mixer of a hybrid's linear layers, over a step's rows.
// Per row: the projections (one product per matrix for all rows); a causal
// depthwise convolution over the slot's last ConvKernel inputs, then SiLU;
// queries and keys L2-normalised per head, the queries scaled by
// 1/sqrt(KeyDim); per value head a decay exp(A·softplus(a+dt_bias)) and a
// write strength β = sigmoid(b); the gated delta rule on the head's state
// matrix S (decay it, write β(v − Sᵀk) along k, read Sᵀq); an RMSNorm of
// each head's output times silu(z); the output projection. A prefill run
// (consecutive rows of one slot) takes the delta rule's chunked form, a
// decode row its recurrent form; both compute the same function (up to
// float32 rounding), and a row's result never depends on which other
// slots' rows share its step.

// recSlot is one slot's recurrent state: per linear layer (in layer
// order), the convolution's last ConvKernel-1 inputs, oldest first, then
// the delta rule's ValueHeads matrices of KeyDim x ValueDim.
type recSlot struct {
	data []float32 // nil until the slot's first row
	pos  int       // positions the state has consumed
}

// linearScratch is the step scratch of the linear layers, grown with the
// rest of the State's.
type linearScratch struct {
	qkv, z, b, a []float32 // projections: rows x ConvDim, VDim, ValueHeads, ValueHeads
	o            []float32 // the delta rule's output, rows x VDim
	outs         [4][]float32
	ws           [4]*kernels.Matrix
	runs         []linRun // this step's delta-rule tasks' runs
	rows         []Row    // the step's rows, while the tasks run
	fn           func(lo, hi int)
	parts        []deltaScratch // per attention part: the chunked form's gathered rows and scratch

	// The work in flight, read by the pool's workers: the layer's weights
	// (the per-row work, deltanet_rows.go) and its index among the linear
	// layers, and the tasks, bound once so that a step allocates nothing.
	d                     *DeltaNet
	li                    int
	convFn, rowFn, normFn func(lo, hi int)
}

// linRun is a run of rows of one slot: [first, first+n) of the step.
type linRun struct{ first, n int }

func (s *State) growLinear(n int) {
	c := s.m.Config
	if !c.Hybrid() {
		return
	}
	ls := c.Linear
	sc := &s.lin
	sc.qkv = make([]float32, n*ls.ConvDim())
	sc.z = make([]float32, n*ls.VDim())
	sc.b = make([]float32, n*ls.ValueHeads)
	sc.a = make([]float32, n*ls.ValueHeads)
	sc.o = make([]float32, n*ls.VDim())
	if sc.fn == nil {
		sc.fn = s.deltaPart
		sc.convFn, sc.rowFn, sc.normFn = s.convPart, s.rowPart, s.normPart
		sc.parts = make([]deltaScratch, s.attParts)
	}
}

// linIndex is the index of linear layer l among the linear layers.
func (c Config) linIndex(l int) int { return l - l/c.FullAttnInterval }

// recState returns the recurrent state of linear layer li of slot at
// position pos: zeroed at position 0 (a new sequence), the state the
// slot's previous rows left otherwise.
func (s *State) recState(slot, li, pos int) (win, mats []float32) {
	c := s.m.Config
	ls := c.Linear
	r := &s.rec[slot]
	per := ls.stateFloats()
	if r.data == nil {
		r.data = s.newRec()
	}
	if pos == 0 && li == 0 { // pos -1: the state as it is
		clear(r.data)
	}
	st := r.data[li*per : (li+1)*per]
	w := (ls.ConvKernel - 1) * ls.ConvDim()
	return st[:w], st[w:]
}

// newRec returns a zeroed state buffer, from the free list when it has one.
func (s *State) newRec() []float32 {
	if n := len(s.recFree); n > 0 {
		b := s.recFree[n-1]
		s.recFree = s.recFree[:n-1]
		return b
	}
	c := s.m.Config
	s.recAllocated++
	return make([]float32, (c.Layers-c.AttnLayers())*c.Linear.stateFloats())
}

// releaseRec ends slot's recurrent state, keeping its buffer for the next
// sequence.
func (s *State) releaseRec(slot int) {
	if slot >= len(s.rec) {
		return
	}
	r := &s.rec[slot]
	if r.data != nil {
		s.recFree = append(s.recFree, r.data)
	}
	*r = recSlot{}
}

// RecurrentBytes is the memory of the recurrent states held (a hybrid's
// Gated DeltaNet layers): the slots' and those kept from released slots
// for the next sequences. It is 0 for a model without such layers.
func (s *State) RecurrentBytes() int64 {
	return int64(s.recAllocated) * s.m.Config.RecurrentBytesPerSlot()
}

// RecurrentBytesPerSlot is the recurrent state of one sequence, whatever
// its length.
func (s *State) RecurrentBytesPerSlot() int64 { return s.m.Config.RecurrentBytesPerSlot() }

// dropRecFree drops the kept recurrent states and returns their bytes.
func (s *State) dropRecFree() int64 {
	n := len(s.recFree)
	clear(s.recFree)
	s.recFree = nil
	s.recAllocated -= n
	return int64(n) * s.m.Config.RecurrentBytesPerSlot()
}

// deltaNet runs linear layer l's mixer on rows: xb holds the rows'
// normalised input and receives the mixer's output.
func (s *State) deltaNet(l int, d *DeltaNet, rows []Row, xb []float32) {
	c := s.m.Config
	ls := c.Linear
	n := len(rows)
	sc := &s.lin
	convDim, vDim, vh := ls.ConvDim(), ls.VDim(), ls.ValueHeads
	qkv, z, b, a, o := sc.qkv[:n*convDim], sc.z[:n*vDim], sc.b[:n*vh], sc.a[:n*vh], sc.o[:n*vDim]
	sc.outs = [4][]float32{qkv, z, b, a}
	sc.ws = [4]*kernels.Matrix{&d.WQKV, &d.WZ, &d.WB, &d.WA}
	s.pool.MatMulSet(sc.outs[:], sc.ws[:], xb, n)
	s.addLoRASet(l, loraLinQKV, sc.outs[:2], xb, n)

	s.planRuns(rows)
	s.prepRows(d, rows, c.linIndex(l))
	s.runDelta(rows)
	s.gatedNorm(d, n)
	s.pool.MatMul(xb, &d.WOut, o, n)
	s.addLoRA(l, loraLinOut, xb, o, n)
}

// l2norm divides v by sqrt(‖v‖² + 1e-6), as transformers' l2norm does.
func l2norm(v []float32) {
	inv := float32(1 / math.Sqrt(float64(kernels.Dot(v, v))+1e-6))
	for i := range v {
		v[i] *= inv
	}
}

// gates turns one row's b and a (ValueHeads each) into β = sigmoid(b) and
// the log-decay g = A·softplus(a + dt_bias), in place.
func (s *State) gates(d *DeltaNet, b, a []float32) {
	for h := range b {
		b[h] = float32(1 / (1 + math.Exp(-float64(b[h]))))
		a[h] = d.A[h] * float32(softplus(float64(a[h]+d.DtBias[h])))
	}
}

// softplus is log(1+e^x), linear above 20 as torch's.
func softplus(x float64) float64 {
	if x > 20 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// planRuns splits rows into runs of one slot's consecutive rows.
func (s *State) planRuns(rows []Row) {
	sc := &s.lin
	sc.runs = sc.runs[:0]
	for i := 0; i < len(rows); {
		j := runEnd(rows, i)
		sc.runs = append(sc.runs, linRun{first: i, n: j - i})
		i = j
	}
}

// runDelta runs the delta rule of every (run, value head) task of the
// step's rows, on the pool when there is enough work.
func (s *State) runDelta(rows []Row) {
	ls := s.m.Config.Linear
	tasks := len(s.lin.runs) * ls.ValueHeads
	work := len(rows) * ls.ValueHeads * ls.KeyDim * ls.ValueDim * 4
	s.lin.rows = rows
	if work < attnWork || s.attParts == 1 || tasks == 1 {
		s.deltaTasks(0, 0, 1)
	} else {
		s.pool.Run(min(s.attParts, tasks), s.lin.fn)
	}
	s.lin.rows = nil
}

// deltaPart runs the delta-rule parts [lo, hi) on one pool worker.
func (s *State) deltaPart(lo, hi int) {
	parts := min(s.attParts, len(s.lin.runs)*s.m.Config.Linear.ValueHeads)
	for p := lo; p < hi; p++ {
		s.deltaTasks(p, p, parts)
	}
}

// deltaTasks runs the tasks first, first+stride, ... with part's scratch.
func (s *State) deltaTasks(part, first, stride int) {
	vh := s.m.Config.Linear.ValueHeads
	for t := first; t < len(s.lin.runs)*vh; t += stride {
		s.deltaHead(part, s.lin.runs[t/vh], t%vh)
	}
}

// deltaHead runs the delta rule of value head h over one run: each row's
// output into s.lin.o, the slot's state matrix updated. A decode row takes
// the recurrent form; a prefill run the chunked form, in chunks that begin
// at multiples of deltaChunk positions of the sequence (not of the run), so
// that a prompt split across steps at such multiples gives the same bits.
func (s *State) deltaHead(part int, run linRun, h int) {
	c := s.m.Config
	ls := c.Linear
	sc := &s.lin
	dk, dv, convDim, vDim, vh := ls.KeyDim, ls.ValueDim, ls.ConvDim(), ls.VDim(), ls.ValueHeads
	first := sc.rows[run.first]
	_, mats := s.recState(first.Slot, sc.li, -1)
	S := mats[h*dk*dv : (h+1)*dk*dv]
	kh := ls.keyHead(h)
	qo, ko, vo := kh*dk, ls.QKDim()+kh*dk, 2*ls.QKDim()+h*dv
	if run.n == 1 {
		i := run.first
		x := sc.qkv[i*convDim : (i+1)*convDim]
		kernels.DeltaStep(S, dk, dv, x[qo:qo+dk], x[ko:ko+dk], x[vo:vo+dv], sc.a[i*vh+h], sc.b[i*vh+h], sc.o[i*vDim+h*dv:i*vDim+(h+1)*dv])
		return
	}
	ds := &sc.parts[part]
	ds.grow(dk, dv)
	for lo := 0; lo < run.n; {
		n := min(run.n-lo, deltaChunk-(first.Pos+lo)%deltaChunk)
		for j := range n {
			i := run.first + lo + j
			x := sc.qkv[i*convDim : (i+1)*convDim]
			copy(ds.q[j*dk:(j+1)*dk], x[qo:qo+dk])
			copy(ds.k[j*dk:(j+1)*dk], x[ko:ko+dk])
			copy(ds.v[j*dv:(j+1)*dv], x[vo:vo+dv])
			ds.g[j], ds.beta[j] = sc.a[i*vh+h], sc.b[i*vh+h]
		}
		kernels.DeltaChunk(S, dk, dv, n, ds.q[:n*dk], ds.k[:n*dk], ds.v[:n*dv], ds.g[:n], ds.beta[:n], ds.out[:n*dv], ds.work)
		for j := range n {
			i := run.first + lo + j
			copy(sc.o[i*vDim+h*dv:i*vDim+(h+1)*dv], ds.out[j*dv:(j+1)*dv])
		}
		lo += n
	}
}

// deltaChunk is the chunk of the delta rule's chunked form, in positions.
const deltaChunk = 64

// deltaScratch is one attention part's scratch of the chunked form: a
// chunk's rows of one head gathered, its outputs, the kernel's work space.
type deltaScratch struct {
	q, k, v, out, g, beta, work []float32
}

// grow sizes the scratch for chunks of heads of dk and dv values, once.
func (d *deltaScratch) grow(dk, dv int) {
	if d.work != nil {
		return
	}
	d.q, d.k = make([]float32, deltaChunk*dk), make([]float32, deltaChunk*dk)
	d.v, d.out = make([]float32, deltaChunk*dv), make([]float32, deltaChunk*dv)
	d.g, d.beta = make([]float32, deltaChunk), make([]float32, deltaChunk)
	d.work = make([]float32, kernels.DeltaChunkScratch(deltaChunk, dk, dv))
}
