package grammar

import "math"

// nfa is an expression compiled to a byte automaton (Thompson's
// construction): states with byte edges and empty edges, one start per
// entry and one accepting state.
type nfa struct {
	edges  [][]edge
	eps    [][]int32
	starts []int32
	accept int32
	dist   []int32 // bytes from each state to accept at the fewest; unreachable: noDist
	limit  int
}

type edge struct {
	lo, hi byte
	to     int32
}

const noDist = math.MaxInt32

func (n *nfa) state() (int32, error) {
	if len(n.edges) >= n.limit {
		return 0, &LimitError{What: "grammar states", Limit: n.limit}
	}
	n.edges = append(n.edges, nil)
	n.eps = append(n.eps, nil)
	return int32(len(n.edges) - 1), nil
}

func (n *nfa) empty(from, to int32) { n.eps[from] = append(n.eps[from], to) }

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
			c := x.lit[i]
			n.edges[cur] = append(n.edges[cur], edge{c, c, next})
			cur = next
		}
		return cur, nil
	case opClass:
		to, err := n.state()
		if err != nil {
			return 0, err
		}
		for _, r := range x.rng {
			n.edges[from] = append(n.edges[from], edge{r.Lo, r.Hi, to})
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
	n.measure()
	return n, nil
}

// measure sets dist by a 0-1 breadth-first search from accept over the
// reversed edges: an empty edge costs nothing, a byte edge one byte.
func (n *nfa) measure() {
	size := len(n.edges)
	type rev struct {
		from int32
		w    int32
	}
	back := make([][]rev, size)
	for u := range size {
		for _, e := range n.edges[u] {
			back[e.to] = append(back[e.to], rev{int32(u), 1})
		}
		for _, v := range n.eps[u] {
			back[v] = append(back[v], rev{int32(u), 0})
		}
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
		for _, r := range back[u] {
			d := n.dist[u] + r.w
			if d < n.dist[r.from] {
				n.dist[r.from] = d
				if r.w == 0 {
					zero = append(zero, r.from)
				} else {
					dq = append(dq, r.from)
				}
			}
		}
	}
}
