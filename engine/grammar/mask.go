package grammar

import (
	"math"
	"math/bits"
)

// mask is the set of tokens a state allows, as bits by token id.
type mask struct {
	bits    []uint64
	allowed int
	// maxNext is the largest distance to the end from a state an allowed
	// token leads to: while the budget exceeds it, the mask is exact.
	maxNext int32
}

// walker holds the scratch of one walk of the trie.
type walker struct {
	states []int32
}

// walk computes the tokens allowed from s into out (cleared first).
// Under a budget (limit >= 0) a token is allowed only if its state is at
// most limit bytes from the end, so that the document still closes.
func (g *Grammar) walk(s int32, limit int32, out *mask) {
	v := g.vocab
	clear(out.bits)
	out.allowed, out.maxNext = 0, 0
	w := &g.walk0
	if len(w.states) < v.maxDepth+1 {
		w.states = make([]int32, v.maxDepth+1)
	}
	st := w.states
	st[0] = s
	d := g.d
	n := int32(len(v.nodeByte))
	for i := int32(0); i < n; {
		depth := v.nodeDepth[i]
		t := d.step(st[depth-1], v.nodeByte[i])
		if t == dead || d.dist[t] == noDist {
			i = v.nodeSkip[i]
			continue
		}
		st[depth] = t
		if lo, hi := v.nodeTok[i], v.nodeTok[i+1]; lo < hi {
			dt := d.dist[t]
			if limit < 0 || g.fits(t, limit) {
				for _, id := range v.toks[lo:hi] {
					out.bits[id>>6] |= 1 << (id & 63)
				}
				out.allowed += int(hi - lo)
				out.maxNext = max(out.maxNext, dt)
			}
		}
		i++
	}
	if d.accept[s] {
		for _, id := range v.stops {
			out.bits[id>>6] |= 1 << (id & 63)
			out.allowed++
		}
	}
}

// cached is the mask of s, computed and kept on first use while the
// grammar's masks fit Limits.MaxMaskBytes; nil if it would not fit.
func (g *Grammar) cached(s int32) *mask {
	for int(s) >= len(g.masks) {
		g.masks = append(g.masks, nil)
	}
	if m := g.masks[s]; m != nil {
		return m
	}
	size := int64(g.vocab.words()) * 8
	if g.kept+size > g.limits.MaxMaskBytes {
		return nil
	}
	m := &mask{bits: make([]uint64, g.vocab.words())}
	g.walk(s, -1, m)
	g.masks[s] = m
	g.kept += size
	return m
}

var negInf = float32(math.Inf(-1))

// negInfs is a run of -Inf to copy over forbidden logits: a copy runs
// several times faster than a loop storing one float at a time.
var negInfs = func() []float32 {
	s := make([]float32, 1<<14)
	for i := range s {
		s[i] = negInf
	}
	return s
}()

// apply sets the logits of the tokens m forbids to -Inf, and those of
// any ids past the vocabulary.
func (m *mask) apply(logits []float32) {
	n := len(logits)
	words := m.bits
	for wi := 0; wi < len(words); wi++ {
		w := words[wi]
		if w == math.MaxUint64 {
			continue
		}
		base := wi << 6
		if w == 0 {
			// A run of words that forbid everything: one copy.
			end := wi + 1
			for end < len(words) && words[end] == 0 {
				end++
			}
			fill(logits[base:min(end<<6, n)])
			wi = end - 1
			continue
		}
		for z := ^w; z != 0; z &= z - 1 {
			if i := base + bits.TrailingZeros64(z); i < n {
				logits[i] = negInf
			}
		}
	}
	if tail := len(words) << 6; tail < n {
		fill(logits[tail:])
	}
}

func fill(s []float32) {
	for len(s) > 0 {
		s = s[copy(s, negInfs):]
	}
}
