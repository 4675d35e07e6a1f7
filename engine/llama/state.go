package llama

import (
	"fmt"

	"github.com/kiln-ai/kiln/kernels"
)

// Row is one token of a batched step: the token at position Pos of the
// sequence in Slot. Logits asks for the next-token logits after it.
type Row struct {
	Slot, Pos, Token int
	Logits           bool
}

// State is the mutable side of a model: the KV caches of a fixed number of
// slots (sequences) and the scratch buffers of the forward pass. A State is
// used by one goroutine at a time (the engine's actor); its Pool is where the
// parallel work runs.
type State struct {
	m    *Model
	pool *kernels.Pool

	slots     []kvSlot    // the sequences (kvblock.go)
	free      []*kvBlock  // blocks no sequence or cache entry holds, kept for reuse
	allocated int         // blocks allocated: the slots', the cache's and the free ones
	cache     prefixCache // the prefix cache (prefix.go)
	rope      *ropeTable  // rotary angles of positions [0, SeqLen)

	// Scratch, sized for cap rows and grown on demand; never shrunk.
	cap      int
	x        []float32 // residual stream, rows x Dim
	xb       []float32 // normalised input of a sub-block, rows x Dim
	q        []float32 // queries, rows x QDim
	k, v     []float32 // this step's keys and values, rows x KVDim
	att      []float32 // attention output, rows x QDim
	hb, hb2  []float32 // feed-forward, rows x HiddenDim
	out      []float32 // classifier output, rows wanting logits x Vocab (when more than one)
	scores   []float32 // attention scores, one SeqLen window per attention part
	attParts int

	// Arguments of the fused products (query/key/value, and the two gate
	// projections), kept here so that passing them allocates nothing.
	qkvOut  [3][]float32
	qkvW    [3]*kernels.Matrix
	gateOut [2][]float32
	gateW   [2]*kernels.Matrix

	// The attention step in flight, read by attnFn on the pool's workers.
	attnLayer int
	attnRows  []Row
	attnFn    func(lo, hi int) // s.attnPart, bound once so Forward does not allocate
	gateFn    func(lo, hi int) // s.attnGatePart, likewise

	// A hybrid's recurrent state (deltanet.go): per slot, and buffers of
	// released slots kept for the next sequences.
	rec          []recSlot
	recFree      [][]float32
	recAllocated int
	lin          linearScratch
	qg           []float32 // a gated attention layer's query projection, rows x QProjDim

	lora  loraState // the LoRA adapter applied, if any (adapter_apply.go)
	chunk chunkAttn // this step's attention groups and the blocked attention's scratch (attn.go)
}

// attnWork is the number of multiply-adds below which attention stays on the
// calling goroutine: handing it to the pool would cost more than it saves.
const attnWork = 1 << 15

// NewState makes the KV caches for slots sequences of up to SeqLen tokens
// (allocated lazily per slot on first use) and the forward-pass scratch.
// pool runs the parallel work; nil means a single-goroutine pool.
func (m *Model) NewState(slots int, pool *kernels.Pool) *State {
	if pool == nil {
		pool = kernels.NewPool(1)
	}
	s := &State{m: m, pool: pool, slots: make([]kvSlot, max(slots, 0))}
	if m.Config.Hybrid() {
		s.rec = make([]recSlot, len(s.slots))
	}
	s.rope = newRopeTable(m.Config, m.RopeFactors)
	s.attParts = max(pool.Workers(), 1)
	s.scores = make([]float32, s.attParts*m.Config.SeqLen)
	s.attnFn = s.attnPart
	s.gateFn = s.attnGatePart
	s.grow(1)
	return s
}

// Slots is the number of sequences the State holds.
func (s *State) Slots() int { return len(s.slots) }

// SeqLen is the longest sequence a slot holds.
func (s *State) SeqLen() int { return s.m.Config.SeqLen }

// VocabSize is the length of one row of logits.
func (s *State) VocabSize() int { return s.m.Config.Vocab }

// Model is the model the State runs.
func (s *State) Model() *Model { return s.m }

// Release ends slot's sequence; the slot may be used again from position
// 0. With the prefix cache on, the sequence's blocks stay cached for later
// sequences (Reuse); otherwise they go to the free list, kept for the next
// sequence, which then meets memory already mapped: a fresh cache cost
// each request's prefill its page faults and regrowth (a 100-token prompt
// of stories15M: 11.5-12.4 ms against 10.3-10.5). Reclaim (a trim) frees
// the free list and the idle cache entries. Releasing an unused or
// out-of-range slot does nothing.
func (s *State) Release(slot int) {
	if slot >= 0 && slot < len(s.slots) {
		if s.rec != nil {
			s.checkpoint(slot)
		}
		s.releaseSlot(&s.slots[slot])
		s.releaseRec(slot)
	}
}

// KVBytes is the KV cache memory currently held: the sequences' blocks,
// the prefix cache's and the free list's.
func (s *State) KVBytes() int64 {
	return int64(s.allocated) * s.blockBytes()
}

// grow makes the scratch hold n rows.
func (s *State) grow(n int) {
	if n <= s.cap {
		return
	}
	c := s.m.Config
	s.cap = n
	s.x = make([]float32, n*c.Dim)
	s.xb = make([]float32, n*c.Dim)
	s.q = make([]float32, n*c.QDim())
	s.k = make([]float32, n*c.KVDim())
	s.v = make([]float32, n*c.KVDim())
	s.att = make([]float32, n*c.QDim())
	s.hb = make([]float32, n*c.HiddenDim)
	s.hb2 = make([]float32, n*c.HiddenDim)
	if c.AttnGate {
		s.qg = make([]float32, n*c.QProjDim())
	}
	s.growLinear(n)
}

// Forward runs one batched step over rows, which may mix prefill chunks
// (consecutive positions of one slot) and decode rows of different slots;
// each weight matrix is read once for all rows. A row at position p attends
// to positions 0..p of its slot: those written by earlier steps and by
// earlier rows of this step. For the k-th row (counting from zero) that has
// Logits set, Forward fills logits[k], which must hold VocabSize values.
//
// Rows must name a slot in [0, Slots()), a position in [0, SeqLen()) and a
// token in [0, VocabSize()); anything else is a caller bug and panics.
func (s *State) Forward(rows []Row, logits [][]float32) {
	n := len(rows)
	if n == 0 {
		return
	}
	m := s.m
	c := m.Config
	dim, hidden := c.Dim, c.HiddenDim
	s.grow(n)
	nl := 0
	for _, r := range rows {
		if r.Slot < 0 || r.Slot >= len(s.slots) || r.Pos < 0 || r.Pos >= c.SeqLen || r.Token < 0 || r.Token >= c.Vocab {
			panic(fmt.Sprintf("llama: Forward row %+v out of range (slots %d, seq_len %d, vocab %d)", r, len(s.slots), c.SeqLen, c.Vocab))
		}
		if r.Logits {
			nl++
		}
		if s.rec != nil && r.Pos != 0 && r.Pos != s.rec[r.Slot].pos {
			panic(fmt.Sprintf("llama: Forward row %+v does not continue its slot's recurrent state (at position %d)", r, s.rec[r.Slot].pos))
		}
		if s.rec != nil {
			s.rec[r.Slot].pos = r.Pos + 1
		}
		s.writable(r.Slot, r.Pos, r.Token)
	}
	if len(logits) < nl {
		panic(fmt.Sprintf("llama: Forward has %d rows wanting logits but %d logits buffers", nl, len(logits)))
	}

	x, xb := s.x[:n*dim], s.xb[:n*dim]
	hb, hb2 := s.hb[:n*hidden], s.hb2[:n*hidden]
	for i, r := range rows {
		m.embed(x[i*dim:(i+1)*dim], r.Token)
	}
	for l := range m.Layers {
		L := &m.Layers[l]
		for i := range n {
			kernels.RMSNorm(xb[i*dim:(i+1)*dim], x[i*dim:(i+1)*dim], L.AttnNorm, c.NormEps)
		}
		if L.Lin != nil {
			s.deltaNet(l, L.Lin, rows, xb)
		} else {
			s.attend(l, L, rows, xb)
		}
		kernels.Axpy(1, xb, x)

		for i := range n {
			kernels.RMSNorm(xb[i*dim:(i+1)*dim], x[i*dim:(i+1)*dim], L.FFNNorm, c.NormEps)
		}
		s.gateOut = [2][]float32{hb, hb2}
		s.gateW = [2]*kernels.Matrix{&L.W1, &L.W3}
		s.pool.MatMulSet(s.gateOut[:], s.gateW[:], xb, n)
		s.addLoRASet(l, loraGate, s.gateOut[:], xb, n)
		kernels.SwiGLU(hb, hb2)
		s.pool.MatMul(xb, &L.W2, hb, n)
		s.addLoRA(l, loraDown, xb, hb, n)
		kernels.Axpy(1, xb, x)
	}

	for _, r := range rows {
		s.wrote(r.Slot, &s.slots[r.Slot], r.Pos)
	}
	if nl > 0 {
		s.classify(rows, logits, nl)
	}
}

// attend runs attention layer l on rows: xb holds the rows' normalised
// input and receives the attention's output projection. A gated layer's
// query projection holds each head's query, then its gate, whose sigmoid
// scales the head's attention output.
func (s *State) attend(l int, L *Layer, rows []Row, xb []float32) {
	c := s.m.Config
	n := len(rows)
	kvDim, qDim := c.KVDim(), c.QDim()
	q, k, v, att := s.q[:n*qDim], s.k[:n*kvDim], s.v[:n*kvDim], s.att[:n*qDim]
	qp := q
	if c.AttnGate {
		qp = s.qg[:n*2*qDim]
	}
	// One dispatch for the three projections of the same input.
	s.qkvOut = [3][]float32{qp, k, v}
	s.qkvW = [3]*kernels.Matrix{&L.WQ, &L.WK, &L.WV}
	s.pool.MatMulSet(s.qkvOut[:], s.qkvW[:], xb, n)
	s.addLoRASet(l, loraQ, s.qkvOut[:], xb, n)
	if c.AttnGate {
		hs := c.HeadDim()
		for i := range n * c.Heads {
			copy(q[i*hs:(i+1)*hs], qp[2*i*hs:(2*i+1)*hs])
		}
	}
	kvl := c.kvLayer(l)
	for i, r := range rows {
		qi, ki, vi := q[i*qDim:(i+1)*qDim], k[i*kvDim:(i+1)*kvDim], v[i*kvDim:(i+1)*kvDim]
		s.positionQKV(L, qi, ki, vi, r.Pos)
		b, at := s.slots[r.Slot].blocks[r.Pos/kvBlockLen], (r.Pos%kvBlockLen)*kvDim
		copy(s.keys(b, kvl)[at:at+kvDim], ki)
		copy(s.vals(b, kvl)[at:at+kvDim], vi)
	}
	s.attention(kvl, rows)
	if c.AttnGate {
		if n*qDim < rowWork || s.attParts == 1 {
			s.attnGatePart(0, n)
		} else {
			s.pool.Run(n, s.gateFn)
		}
	}
	s.pool.MatMul(xb, &L.WO, att, n)
	s.addLoRA(l, loraO, xb, att, n)
}

// attnGatePart scales the attention output of rows [lo, hi) of a gated
// layer's step by the sigmoid of each head's gate (s.qg).
func (s *State) attnGatePart(lo, hi int) {
	c := s.m.Config
	hs := c.HeadDim()
	for i := lo * c.Heads; i < hi*c.Heads; i++ {
		gate := s.qg[(2*i+1)*hs : (2*i+2)*hs]
		out := s.att[i*hs : (i+1)*hs]
		kernels.Sigmoid(gate) // the projection is not read again
		for j, g := range gate {
			out[j] *= g
		}
	}
}

// classify writes the logits of the nl rows that asked for them from the
// final residual stream.
func (s *State) classify(rows []Row, logits [][]float32, nl int) {
	m := s.m
	c := m.Config
	dim := c.Dim
	x, xb := s.x, s.xb
	j := 0
	for i, r := range rows {
		if r.Logits {
			kernels.RMSNorm(xb[j*dim:(j+1)*dim], x[i*dim:(i+1)*dim], m.Norm, c.NormEps)
			j++
		}
	}
	vocab := c.Vocab
	if nl == 1 {
		s.pool.MatMul(logits[0][:vocab], m.Output, xb[:dim], 1)
		return
	}
	if len(s.out) < nl*vocab {
		s.out = make([]float32, nl*vocab) // grown to the most rows that asked for logits at once
	}
	out := s.out[:nl*vocab]
	s.pool.MatMul(out, m.Output, xb[:nl*dim], nl)
	for j := range nl {
		copy(logits[j][:vocab], out[j*vocab:(j+1)*vocab])
	}
}

// positionQKV finishes one row's projections in place: biases (qwen2),
// per-head RMSNorm of queries and keys (qwen3), then the rotary embedding.
func (s *State) positionQKV(L *Layer, q, k, v []float32, pos int) {
	c := &s.m.Config
	if c.QKVBias {
		kernels.Axpy(1, L.BQ, q)
		kernels.Axpy(1, L.BK, k)
		kernels.Axpy(1, L.BV, v)
	}
	if c.QKNorm {
		hs := c.HeadDim()
		for h := 0; h < len(q); h += hs {
			kernels.RMSNorm(q[h:h+hs], q[h:h+hs], L.QNorm, c.NormEps)
		}
		for h := 0; h < len(k); h += hs {
			kernels.RMSNorm(k[h:h+hs], k[h:h+hs], L.KNorm, c.NormEps)
		}
	}
	s.rope.apply(q, pos)
	s.rope.apply(k, pos)
}
