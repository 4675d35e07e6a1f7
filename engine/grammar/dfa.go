package grammar

import (
	"slices"
	"unsafe"
)

// dfa determinises an nfa lazily: a state is a set of automaton states
// closed under empty edges, built the first time a byte leads to it.
// State 0 is dead (the empty set). Not safe for concurrent use: the
// Grammar that owns it locks around it.
type dfa struct {
	n      *nfa
	sets   [][]int32
	accept []bool
	dist   []int32
	trans  []int32 // 256 per state; unknown: -1
	index  map[string]int32
	limit  int
	full   bool // a state was refused: limit reached

	mark  []uint32
	gen   uint32
	stack []int32
	seeds []int32
}

const dead = 0

func newDFA(n *nfa, limit int) *dfa {
	d := &dfa{n: n, index: map[string]int32{}, limit: limit, mark: make([]uint32, n.size)}
	d.add(nil)
	for i := range d.trans[:256] {
		d.trans[i] = dead
	}
	return d
}

// start is the state of entry i.
func (d *dfa) start(i int) int32 {
	return d.intern(d.closure(append(d.seeds[:0], d.n.starts[i])))
}

// step is the state after byte c from s.
func (d *dfa) step(s int32, c byte) int32 {
	if t := d.trans[int(s)<<8|int(c)]; t >= 0 {
		return t
	}
	seeds := d.seeds[:0]
	for _, u := range d.sets[s] {
		for _, e := range d.n.out(u) {
			if e.lo <= c && c <= e.hi {
				seeds = append(seeds, e.to)
			}
		}
	}
	t := d.intern(d.closure(seeds))
	d.trans[int(s)<<8|int(c)] = t
	return t
}

// closure is the sorted set of states the seeds reach by empty edges.
func (d *dfa) closure(seeds []int32) []int32 {
	d.gen++
	if d.gen == 0 {
		clear(d.mark)
		d.gen = 1
	}
	out := d.stack[:0]
	stack := seeds
	for _, s := range stack {
		d.mark[s] = d.gen
	}
	out = append(out, stack...)
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range d.n.epsOf(u) {
			if d.mark[v] != d.gen {
				d.mark[v] = d.gen
				out = append(out, v)
				stack = append(stack, v)
			}
		}
	}
	// Only states with byte edges, or the accepting one, tell states
	// apart: dropping the rest merges sets that behave alike.
	keep := out[:0]
	for _, u := range out {
		if len(d.n.out(u)) > 0 || u == d.n.accept {
			keep = append(keep, u)
		}
	}
	slices.Sort(keep)
	d.seeds, d.stack = seeds[:0], keep[:0]
	return keep
}

func (d *dfa) intern(set []int32) int32 {
	if len(set) == 0 {
		return dead
	}
	key := unsafe.String((*byte)(unsafe.Pointer(&set[0])), len(set)*4)
	if s, ok := d.index[key]; ok {
		return s
	}
	if len(d.sets) >= d.limit {
		d.full = true
		return dead
	}
	return d.add(slices.Clone(set))
}

func (d *dfa) add(set []int32) int32 {
	s := int32(len(d.sets))
	d.sets = append(d.sets, set)
	acc, dist := false, int32(noDist)
	for _, u := range set {
		acc = acc || u == d.n.accept
		dist = min(dist, d.n.dist[u])
	}
	d.accept = append(d.accept, acc)
	d.dist = append(d.dist, dist)
	for range 256 {
		d.trans = append(d.trans, -1)
	}
	if len(set) > 0 {
		d.index[string(unsafe.Slice((*byte)(unsafe.Pointer(&set[0])), len(set)*4))] = s
	}
	return s
}

// final reports whether s accepts and no byte leads on from it.
func (d *dfa) final(s int32) bool {
	if !d.accept[s] {
		return false
	}
	for _, u := range d.sets[s] {
		if len(d.n.out(u)) > 0 {
			return false
		}
	}
	return true
}
