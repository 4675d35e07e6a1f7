package grammar

import (
	"math"
	"math/bits"
)

// mask is the set of tokens a state allows, as bits by token id, with
// how many tokens the document needs to close after each: most allowed
// tokens share one bound (mode: those that stay inside a string, say),
// and the others are listed, so that a tight budget filters the mask
// without walking the trie again.
type mask struct {
	bits    []uint64
	allowed int
	// maxNext is the largest bound after an allowed token: while the
	// tokens left after this one are at least that, the mask is exact.
	maxNext int32
	mode    int32   // the bound most allowed tokens share
	except  []int32 // the allowed tokens whose bound is not mode
	bound   []int32 // and their bounds
}

// walker holds the scratch of one walk of the trie.
type walker struct {
	states []int32
	toks   []int32 // the allowed tokens of the walk, and their bounds
	bounds []int32
	count  map[int32]int
}

// walk computes the tokens allowed from s into out (cleared first), with
// each one's bound. Under a budget (limit >= 0) a token is allowed only
// if the document can still close in limit tokens after it.
func (g *Grammar) walk(s int32, limit int32, out *mask) {
	v := g.vocab
	clear(out.bits)
	out.allowed, out.maxNext = 0, 0
	w := &g.walk0
	if len(w.states) < v.maxDepth+1 {
		w.states = make([]int32, v.maxDepth+1)
	}
	w.toks, w.bounds = w.toks[:0], w.bounds[:0]
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
			b := g.closeTokens(t)
			if limit < 0 || b <= limit {
				for _, id := range v.toks[lo:hi] {
					out.bits[id>>6] |= 1 << (id & 63)
					w.toks = append(w.toks, id)
					w.bounds = append(w.bounds, b)
				}
				out.allowed += int(hi - lo)
				out.maxNext = max(out.maxNext, b)
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

// split fills m's mode and exceptions from the last walk (g.mu held).
func (g *Grammar) split(m *mask) {
	w := &g.walk0
	if w.count == nil {
		w.count = map[int32]int{}
	}
	clear(w.count)
	best, bestN := int32(0), -1
	for _, b := range w.bounds {
		w.count[b]++
		if c := w.count[b]; c > bestN {
			best, bestN = b, c
		}
	}
	m.mode = best
	for i, b := range w.bounds {
		if b != best {
			m.except = append(m.except, w.toks[i])
			m.bound = append(m.bound, b)
		}
	}
}

// applyWithin applies m under a budget: only tokens after which the
// document closes within limit tokens (and, where it is complete, the
// stop tokens). It reports whether the budget removed any.
// Nothing is changed when nothing would be allowed.
func (g *Grammar) applyWithin(m *mask, s, limit int32, logits []float32) (removed bool, allowed int) {
	if m.maxNext <= limit {
		if m.allowed > 0 {
			m.apply(logits)
		}
		return false, m.allowed
	}
	if m.mode <= limit {
		allowed = m.allowed
		for i := range m.except {
			if m.bound[i] > limit {
				allowed--
			}
		}
		if allowed == 0 {
			return true, 0
		}
		m.apply(logits)
		for i, id := range m.except {
			if m.bound[i] > limit && int(id) < len(logits) {
				logits[id] = negInf
			}
		}
		return true, allowed
	}
	// Few survive: keep them, forbid the rest.
	w := &g.walk0
	w.toks, w.bounds = w.toks[:0], w.bounds[:0]
	keep := func(id int32) {
		if int(id) < len(logits) {
			w.toks = append(w.toks, id)
			w.bounds = append(w.bounds, int32(math.Float32bits(logits[id])))
		}
	}
	for i, id := range m.except {
		if m.bound[i] <= limit {
			keep(id)
		}
	}
	if g.d.accept[s] {
		for _, id := range g.vocab.stops {
			keep(id)
		}
	}
	if len(w.toks) == 0 {
		return true, 0
	}
	fill(logits)
	for i, id := range w.toks {
		logits[id] = math.Float32frombits(uint32(w.bounds[i]))
	}
	return true, len(w.toks)
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
	g.split(m)
	size += int64(len(m.except)) * 8
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
