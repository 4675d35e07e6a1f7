package llama

import (
	"math"

	"github.com/kiln-ai/kiln/kernels"
)

// Attention of one layer over a step's rows, reading each slot's paged
// cache block by block in position order (kvblock.go), which gives bit for
// bit the sums over one contiguous cache. A decode row attends alone:
// its scores against every cached key in one call (kernels.AttnScores1),
// a softmax, its weighted values in one call (kernels.AttnValues1), bit
// for bit one Dot and one Axpy per position. The
// rows of a prefill run (consecutive rows of one slot at consecutive
// positions) attend in blocks of attnBlock rows per head: one pass over
// the cache computes the scores of all the block's rows against each key
// (kernels.AttnScores4) and one pass their weighted values
// (kernels.AttnValues4), each cached key and value read once per block.
// The causal mask is the rows' own positions: a row's softmax spans its
// positions 0..p, and its weights past p are zero, which leaves its value
// sum unchanged. A row's result never depends on which rows share its
// block.

// attnBlock is the number of prefill rows that share each pass over the
// cache (the kernels' four query rows).
const attnBlock = 4

// attnGroup is one attention task's rows (per head): [first,
// first+rows) of the step; run marks rows of a prefill run, which take the
// blocked path even when a group has one row, so that a row's attention
// is computed the same way whatever the run's length.
type attnGroup struct {
	first, rows int
	run         bool
}

// chunkAttn holds a step's groups and, per attention part, the blocked
// path's scratch: attnBlock*SeqLen interleaved scores, then one head of
// output for the rows a group lacks. Both grow once and are reused.
type chunkAttn struct {
	groups []attnGroup
	buf    []float32
}

// planAttention splits rows into attention groups and sizes the scratch.
func (s *State) planAttention(rows []Row) {
	ca := &s.chunk
	ca.groups = ca.groups[:0]
	blocked := false
	for i := 0; i < len(rows); {
		j := runEnd(rows, i)
		if j-i == 1 {
			ca.groups = append(ca.groups, attnGroup{first: i, rows: 1})
		}
		for k := i; j-i > 1 && k < j; k += attnBlock {
			ca.groups = append(ca.groups, attnGroup{first: k, rows: min(attnBlock, j-k), run: true})
			blocked = true
		}
		i = j
	}
	if need := s.attParts * s.chunkPartLen(); blocked && len(ca.buf) < need {
		ca.buf = make([]float32, need) // once: the first prefill run
	}
}

// runEnd is the end of the run of rows that begins at i: the rows after it
// of the same slot at the positions that follow (a prefill run; a decode
// row is a run of one).
func runEnd(rows []Row, i int) int {
	j := i + 1
	for j < len(rows) && rows[j].Slot == rows[i].Slot && rows[j].Pos == rows[j-1].Pos+1 {
		j++
	}
	return j
}

// chunkPartLen is the blocked path's scratch per attention part.
func (s *State) chunkPartLen() int {
	c := s.m.Config
	return attnBlock*c.SeqLen + c.HeadDim()
}

// attention computes s.att for every row of layer l from s.q and the slots'
// caches, in parallel over (group, head) tasks when there is enough work.
func (s *State) attention(l int, rows []Row) {
	c := s.m.Config
	s.planAttention(rows)
	work := 0
	for _, r := range rows {
		work += r.Pos + 1
	}
	work *= c.QDim()
	tasks := len(s.chunk.groups) * c.Heads
	s.attnLayer, s.attnRows = l, rows
	if work < attnWork || s.attParts == 1 || tasks == 1 {
		s.attnTasks(0, 0, 1)
	} else {
		s.pool.Run(min(s.attParts, tasks), s.attnFn)
	}
	s.attnRows = nil
}

// attnPart runs the attention parts [lo, hi) on one pool worker.
func (s *State) attnPart(lo, hi int) {
	parts := min(s.attParts, len(s.chunk.groups)*s.m.Config.Heads)
	for p := lo; p < hi; p++ {
		s.attnTasks(p, p, parts)
	}
}

// attnTasks runs the (group, head) tasks first, first+stride, ... with the
// scratch of part. Striding balances prefill chunks, whose later rows
// attend to more positions.
func (s *State) attnTasks(part, first, stride int) {
	heads := s.m.Config.Heads
	for t := first; t < len(s.chunk.groups)*heads; t += stride {
		g, h := s.chunk.groups[t/heads], t%heads
		if g.run {
			s.attnBlockHead(part, g, h)
		} else {
			s.attnRowHead(part, g.first, h)
		}
	}
}

// attnRowHead is the attention of one row (a decode row) for head h.
func (s *State) attnRowHead(part, i, h int) {
	c := s.m.Config
	qDim, kvDim, hs := c.QDim(), c.KVDim(), c.HeadDim()
	scale := float32(math.Sqrt(float64(hs)))
	r := s.attnRows[i]
	kv := &s.slots[r.Slot]
	off := (h / (c.Heads / c.KVHeads)) * hs
	q := s.q[i*qDim+h*hs : i*qDim+(h+1)*hs]
	sc := s.scores[part*c.SeqLen : part*c.SeqLen+r.Pos+1]
	for p := 0; p < len(sc); p += kvBlockLen {
		b := kv.blocks[p/kvBlockLen]
		kernels.AttnScores1(sc[p:min(p+kvBlockLen, len(sc))], q, s.keys(b, s.attnLayer)[off:], kvDim, min(kvBlockLen, len(sc)-p))
	}
	for p := range sc {
		sc[p] /= scale
	}
	kernels.Softmax(sc)
	out := s.att[i*qDim+h*hs : i*qDim+(h+1)*hs]
	clear(out)
	for p := 0; p < len(sc); p += kvBlockLen {
		b := kv.blocks[p/kvBlockLen]
		kernels.AttnValues1(out, sc[p:], s.vals(b, s.attnLayer)[off:], kvDim, min(kvBlockLen, len(sc)-p))
	}
}

// attnBlockHead is the attention of a group of up to attnBlock rows of a
// prefill run for head h: scores of every row against positions up to the
// group's last, each row's causal softmax, then the weighted values. Rows
// the group lacks repeat its last query and write to a scratch output,
// with zero weights.
func (s *State) attnBlockHead(part int, g attnGroup, h int) {
	c := s.m.Config
	qDim, kvDim, hs := c.QDim(), c.KVDim(), c.HeadDim()
	scale := float32(math.Sqrt(float64(hs)))
	rows := s.attnRows[g.first : g.first+g.rows]
	n := rows[len(rows)-1].Pos + 1
	kv := &s.slots[rows[0].Slot]
	off := (h / (c.Heads / c.KVHeads)) * hs
	buf := s.chunk.buf[part*s.chunkPartLen() : (part+1)*s.chunkPartLen()]
	sc4, spare := buf[:attnBlock*n], buf[attnBlock*c.SeqLen:]
	var q, out [attnBlock][]float32
	for r := range attnBlock {
		i := g.first + min(r, g.rows-1)
		q[r] = s.q[i*qDim+h*hs : i*qDim+(h+1)*hs]
		out[r] = spare[:hs]
		if r < g.rows {
			out[r] = s.att[i*qDim+h*hs : i*qDim+(h+1)*hs]
		}
	}
	for p := 0; p < n; p += kvBlockLen {
		b := kv.blocks[p/kvBlockLen]
		kernels.AttnScores4(sc4[4*p:], &q, s.keys(b, s.attnLayer)[off:], kvDim, min(kvBlockLen, n-p))
	}
	win := s.scores[part*c.SeqLen : (part+1)*c.SeqLen]
	for r := range attnBlock {
		np := 0 // a missing row gets zero weights everywhere
		if r < g.rows {
			np = rows[r].Pos + 1
			w := win[:np]
			for p := range w {
				w[p] = sc4[attnBlock*p+r] / scale
			}
			kernels.Softmax(w)
			for p, a := range w {
				sc4[attnBlock*p+r] = a
			}
		}
		for p := np; p < n; p++ {
			sc4[attnBlock*p+r] = 0
		}
	}
	for r := range attnBlock {
		clear(out[r])
	}
	for p := 0; p < n; p += kvBlockLen {
		b := kv.blocks[p/kvBlockLen]
		kernels.AttnValues4Add(&out, sc4[4*p:], s.vals(b, s.attnLayer)[off:], kvDim, min(kvBlockLen, n-p))
	}
}
