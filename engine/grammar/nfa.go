package grammar

import (
	"math"
	"slices"
)

// nfa is an expression compiled to a byte automaton (Thompson's
// construction): states with byte edges and empty edges, one start per
// entry and one accepting state. Edges are collected in one list while
// building and laid out by state once (compressed rows): a state is a
// number, not an allocation.
type nfa struct {
	size   int32 // states
	built  []rawEdge
	starts []int32
	accept int32
	limit  int

	edgeAt []int32 // state u's byte edges are edges[edgeAt[u]:edgeAt[u+1]]
	edges  []edge
	epsAt  []int32 // and its empty edges eps[epsAt[u]:epsAt[u+1]]
	eps    []int32
	dist   []int32 // bytes from each state to accept at the fewest; unreachable: noDist
}

type edge struct {
	lo, hi byte
	to     int32
}

// rawEdge is an edge as built: an empty one has empty set.
type rawEdge struct {
	from, to int32
	lo, hi   byte
	empty    bool
}

const noDist = math.MaxInt32

func (n *nfa) state() (int32, error) {
	if int(n.size) >= n.limit {
		return 0, &LimitError{What: "grammar states", Limit: n.limit}
	}
	n.size++
	return n.size - 1, nil
}

func (n *nfa) empty(from, to int32) {
	n.built = append(n.built, rawEdge{from: from, to: to, empty: true})
}

func (n *nfa) byteEdge(from, to int32, lo, hi byte) {
	n.built = append(n.built, rawEdge{from: from, to: to, lo: lo, hi: hi})
}

// out is u's byte edges; epsOf its empty edges.
func (n *nfa) out(u int32) []edge    { return n.edges[n.edgeAt[u]:n.edgeAt[u+1]] }
func (n *nfa) epsOf(u int32) []int32 { return n.eps[n.epsAt[u]:n.epsAt[u+1]] }

// layout moves the built edges into rows by state.
func (n *nfa) layout() {
	n.edgeAt = make([]int32, n.size+1)
	n.epsAt = make([]int32, n.size+1)
	for _, e := range n.built {
		if e.empty {
			n.epsAt[e.from+1]++
		} else {
			n.edgeAt[e.from+1]++
		}
	}
	for u := range n.size {
		n.edgeAt[u+1] += n.edgeAt[u]
		n.epsAt[u+1] += n.epsAt[u]
	}
	n.edges = make([]edge, n.edgeAt[n.size])
	n.eps = make([]int32, n.epsAt[n.size])
	ei, pi := slices.Clone(n.edgeAt[:n.size]), slices.Clone(n.epsAt[:n.size])
	for _, e := range n.built {
		if e.empty {
			n.eps[pi[e.from]] = e.to
			pi[e.from]++
		} else {
			n.edges[ei[e.from]] = edge{e.lo, e.hi, e.to}
			ei[e.from]++
		}
	}
}

// build adds x to the automaton starting at from and returns where it ends.
func (n *nfa) build(x *Expr, from int32) (int32, error) {
	switch x.op {
	case opEmpty:
		return from, nil
	case opFail:
		return n.state()
	case opLit:
		cur := from
		for i := 0; i < len(x.lit); i++ {
			next, err := n.state()
			if err != nil {
				return 0, err
			}
			n.byteEdge(cur, next, x.lit[i], x.lit[i])
			cur = next
		}
		return cur, nil
	case opClass:
		to, err := n.state()
		if err != nil {
			return 0, err
		}
		for _, r := range x.rng {
			n.byteEdge(from, to, r.Lo, r.Hi)
		}
		return to, nil
	case opSeq:
		cur := from
		for _, s := range x.subs {
			var err error
			if cur, err = n.build(s, cur); err != nil {
				return 0, err
			}
		}
		return cur, nil
	case opAlt:
		to, err := n.state()
		if err != nil {
			return 0, err
		}
		for _, s := range x.subs {
			in, err := n.state()
			if err != nil {
				return 0, err
			}
			n.empty(from, in)
			out, err := n.build(s, in)
			if err != nil {
				return 0, err
			}
			n.empty(out, to)
		}
		return to, nil
	case opRepeat:
		return n.repeat(x, from)
	case opList:
		// from -> item -> out, and out -> sep -> back to the item.
		in, err := n.state()
		if err != nil {
			return 0, err
		}
		n.empty(from, in)
		out, err := n.build(x.subs[0], in)
		if err != nil {
			return 0, err
		}
		again, err := n.build(x.subs[1], out)
		if err != nil {
			return 0, err
		}
		n.empty(again, in)
		return out, nil
	case opMembers:
		return n.members(x, from)
	}
	panic("grammar: unknown expression")
}

func (n *nfa) repeat(x *Expr, from int32) (int32, error) {
	item := x.subs[0]
	cur := from
	var err error
	for i := 0; i < x.min; i++ {
		// Each copy gets a fresh entry state so that an item's loops
		// never reach back into the previous copy.
		in, err := n.state()
		if err != nil {
			return 0, err
		}
		n.empty(cur, in)
		if cur, err = n.build(item, in); err != nil {
			return 0, err
		}
	}
	if x.max < 0 {
		loop, err := n.state()
		if err != nil {
			return 0, err
		}
		n.empty(cur, loop)
		in, err := n.state()
		if err != nil {
			return 0, err
		}
		n.empty(loop, in)
		out, err := n.build(item, in)
		if err != nil {
			return 0, err
		}
		n.empty(out, loop)
		return loop, nil
	}
	to, err := n.state()
	if err != nil {
		return 0, err
	}
	n.empty(cur, to)
	for i := x.min; i < x.max; i++ {
		in, err := n.state()
		if err != nil {
			return 0, err
		}
		n.empty(cur, in)
		if cur, err = n.build(item, in); err != nil {
			return 0, err
		}
		n.empty(cur, to)
	}
	return to, err
}

// members lays out two lanes of states: first[i] before member i when no
// member is present yet, rest[i] before it when one is (so a separator
// comes first). Optional members may be skipped in either lane.
func (n *nfa) members(x *Expr, from int32) (int32, error) {
	sep, items := x.subs[0], x.subs[1:]
	first, rest := from, int32(-1)
	for i, item := range items {
		nextRest, err := n.state()
		if err != nil {
			return 0, err
		}
		nextFirst, err := n.state()
		if err != nil {
			return 0, err
		}
		in, err := n.state()
		if err != nil {
			return 0, err
		}
		n.empty(first, in)
		out, err := n.build(item, in)
		if err != nil {
			return 0, err
		}
		n.empty(out, nextRest)
		if rest >= 0 {
			afterSep, err := n.build(sep, rest)
			if err != nil {
				return 0, err
			}
			in, err := n.state()
			if err != nil {
				return 0, err
			}
			n.empty(afterSep, in)
			out, err := n.build(item, in)
			if err != nil {
				return 0, err
			}
			n.empty(out, nextRest)
			if !x.req[i] {
				n.empty(rest, nextRest)
			}
		}
		if !x.req[i] {
			n.empty(first, nextFirst)
		}
		first, rest = nextFirst, nextRest
	}
	end, err := n.state()
	if err != nil {
		return 0, err
	}
	n.empty(rest, end)
	n.empty(first, end) // reachable only when every member is optional
	return end, nil
}

// compileNFA builds one automaton for the entries, all ending in one
// accepting state, and measures each state's distance to it.
func compileNFA(entries []*Expr, limit int) (*nfa, error) {
	n := &nfa{limit: limit}
	accept, err := n.state()
	if err != nil {
		return nil, err
	}
	n.accept = accept
	for _, e := range entries {
		start, err := n.state()
		if err != nil {
			return nil, err
		}
		end, err := n.build(e, start)
		if err != nil {
			return nil, err
		}
		n.empty(end, accept)
		n.starts = append(n.starts, start)
	}
	n.layout()
	n.measure()
	n.built = nil
	return n, nil
}

// measure sets dist by a 0-1 breadth-first search from accept over the
// reversed edges: an empty edge costs nothing, a byte edge one byte.
func (n *nfa) measure() {
	size := n.size
	// The reversed edges in rows by their head: backAt/back/backW.
	backAt := make([]int32, size+1)
	for _, e := range n.built {
		backAt[e.to+1]++
	}
	for u := range size {
		backAt[u+1] += backAt[u]
	}
	back := make([]int32, len(n.built))
	backW := make([]bool, len(n.built)) // a byte edge: costs one
	at := slices.Clone(backAt[:size])
	for _, e := range n.built {
		back[at[e.to]] = e.from
		backW[at[e.to]] = !e.empty
		at[e.to]++
	}
	n.dist = make([]int32, size)
	for i := range n.dist {
		n.dist[i] = noDist
	}
	n.dist[n.accept] = 0
	dq := []int32{n.accept}
	head := 0
	// A deque as a slice: zero-weight moves go to the front by being
	// processed before the rest via a second queue.
	var zero []int32
	for head < len(dq) || len(zero) > 0 {
		var u int32
		if len(zero) > 0 {
			u = zero[len(zero)-1]
			zero = zero[:len(zero)-1]
		} else {
			u = dq[head]
			head++
		}
		for i := backAt[u]; i < backAt[u+1]; i++ {
			from, d := back[i], n.dist[u]
			if backW[i] {
				d++
			}
			if d < n.dist[from] {
				n.dist[from] = d
				if backW[i] {
					dq = append(dq, from)
				} else {
					zero = append(zero, from)
				}
			}
		}
	}
}
