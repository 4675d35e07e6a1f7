package grammar

import (
	"fmt"
	"strings"
)

// Matcher is one request's position in a grammar. Mask restricts the
// next token; Accept advances past the token sampled. Not safe for
// concurrent use; many Matchers may share a Grammar.
type Matcher struct {
	g     *Grammar
	st    int32 // the state; free: waiting for a trigger (lazy)
	free  bool
	ended bool // a lazy Once grammar's part is complete: only stops remain

	tail    []byte // lazy: the latest output, to find a trigger in
	scratch mask

	done      bool
	truncated bool
	forced    bool
	failed    bool
	parts     int
}

// NewMatcher starts a Matcher at the beginning of the grammar.
func (g *Grammar) NewMatcher() *Matcher {
	m := &Matcher{g: g, free: g.lazy != nil}
	if !m.free {
		m.st = g.starts[0]
	}
	return m
}

// Mask sets the logits of the tokens the grammar forbids next to -Inf.
// remaining is how many tokens may still be generated, this one
// included: when the shortest way to close the document uses all of
// them, only tokens that keep it closable within the rest are allowed.
func (m *Matcher) Mask(logits []float32, remaining int) {
	if m.failed || m.free && !m.ended {
		return
	}
	g := m.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if m.ended {
		m.onlyStops(logits)
		return
	}
	limit := int32(remaining - 1)
	if !g.fits(m.st, int32(remaining)) {
		// Even the shortest completion does not fit: say so, and keep to
		// the grammar as far as the budget goes.
		m.truncated = true
	}
	mk := g.cached(m.st)
	switch {
	case mk != nil && m.truncated:
		m.applyMask(mk, logits)
		return
	case mk != nil:
		removed, allowed := g.applyWithin(mk, m.st, limit, logits)
		m.forced = m.forced || removed && allowed > 0
		m.failed = allowed == 0
		return
	}
	// The masks kept are at their bound: walk again, allowing only tokens
	// after which the document still closes.
	if m.scratch.bits == nil {
		m.scratch.bits = make([]uint64, g.vocab.words())
	}
	if m.truncated {
		limit = -1
	}
	g.walk(m.st, limit, &m.scratch)
	m.applyMask(&m.scratch, logits)
}

func (m *Matcher) applyMask(mk *mask, logits []float32) {
	if mk.allowed == 0 {
		m.failed = true
		return
	}
	mk.apply(logits)
}

func (m *Matcher) onlyStops(logits []float32) {
	g := m.g
	if len(g.vocab.stops) == 0 {
		return
	}
	if g.stopMask == nil {
		g.stopMask = &mask{bits: make([]uint64, g.vocab.words())}
		for _, id := range g.vocab.stops {
			g.stopMask.bits[id>>6] |= 1 << (id & 63)
			g.stopMask.allowed++
		}
	}
	g.stopMask.apply(logits)
}

// Accept advances past token id. An error means the grammar did not
// allow it.
func (m *Matcher) Accept(id int) error {
	if m.failed {
		return nil
	}
	g := m.g
	v := g.vocab
	if v.isStop(id) {
		if m.free && !m.ended {
			return nil
		}
		g.mu.Lock()
		acc := m.ended || g.d.accept[m.st]
		g.mu.Unlock()
		if !acc {
			return fmt.Errorf("grammar: the stop token %d ends an incomplete document", id)
		}
		m.done = true
		return nil
	}
	p := v.Piece(id)
	if m.ended {
		return fmt.Errorf("grammar: token %d after the end", id)
	}
	if m.free {
		m.watch(p)
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return m.feed(p, id)
}

// feed advances the state by p's bytes (g.mu held).
func (m *Matcher) feed(p string, id int) error {
	g := m.g
	st := m.st
	for i := 0; i < len(p); i++ {
		st = g.d.step(st, p[i])
		if st == dead {
			return fmt.Errorf("grammar: token %d (%q) does not continue the document", id, p)
		}
	}
	m.st = st
	if g.d.accept[st] {
		m.done = true
		if g.lazy != nil && g.d.final(st) {
			m.endPart()
		}
	}
	return nil
}

// endPart leaves a lazy grammar's part, complete.
func (m *Matcher) endPart() {
	m.parts++
	m.tail = m.tail[:0]
	if m.g.lazy.Once {
		m.ended = true
		return
	}
	m.free = true
}

// watch looks for a trigger in the output so far; the bytes after it
// start the constrained part.
func (m *Matcher) watch(p string) {
	g := m.g
	lz := g.lazy
	m.tail = append(m.tail, p...)
	best, entry := -1, -1
	for i, t := range lz.Triggers {
		if at := strings.Index(string(m.tail), t); at >= 0 && (best < 0 || at < best) {
			best, entry = at, i
		}
	}
	if best < 0 {
		if keep := lz.longest - 1; len(m.tail) > keep {
			m.tail = append(m.tail[:0], m.tail[len(m.tail)-keep:]...)
		}
		return
	}
	rest := string(m.tail[best+len(lz.Triggers[entry]):])
	m.tail = m.tail[:0]
	g.mu.Lock()
	defer g.mu.Unlock()
	m.free, m.done = false, false
	m.st = g.starts[entry]
	if err := m.feed(rest, -1); err != nil {
		// The token that completed the trigger ran past it into bytes
		// the part cannot start with: give up constraining.
		m.failed = true
	}
}

// Done reports whether the output is a complete document (a lazy
// grammar: whether a constrained part has been completed and none is
// open).
func (m *Matcher) Done() bool {
	if m.g.lazy != nil {
		return m.parts > 0 && (m.free || m.ended)
	}
	return m.done
}

// Active reports whether the matcher is inside a constrained part (an
// eager grammar always is, until a stop token).
func (m *Matcher) Active() bool { return !m.free && !m.ended && !m.failed }

// Truncated reports whether the budget was too small for even the
// shortest completion of the document: the output cannot be complete.
func (m *Matcher) Truncated() bool { return m.truncated }

// Forced reports whether the budget forced the grammar to close the
// document early (only closing moves were allowed at the end).
func (m *Matcher) Forced() bool { return m.forced }

// Failed reports whether the matcher gave up: its grammar allowed no
// token, or a lazy trigger's token ran into bytes the part refuses.
func (m *Matcher) Failed() bool { return m.failed }
