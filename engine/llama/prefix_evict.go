package llama

import (
	"container/heap"

	"github.com/kiln-ai/kiln/internal/timing"
)

// SetPrefixLimit bounds the bytes of idle cache entries (those no running
// sequence uses) to limit, evicting the least recently used first (for
// reason), and returns the bytes evicted. A negative limit is no bound.
// The engine sets it whenever its free KV budget changes.
func (s *State) SetPrefixLimit(limit int64, reason timing.PrefixEvict) int64 {
	s.cache.limit = limit
	return s.fitIdle(reason)
}

// fitIdle evicts idle entries, least recently used first, until their
// bytes are within the cache's bound, and returns the bytes evicted.
func (s *State) fitIdle(reason timing.PrefixEvict) int64 {
	c := &s.cache
	if c.limit < 0 || s.idleBytes() <= c.limit {
		return 0
	}
	return s.evictLRU(c.roots(nil), c.limit, reason)
}

// idleBytes is the memory of the idle entries and of every recurrent-state
// checkpoint (a hybrid's: a sequence reusing one copies it, so a
// checkpoint is never in use).
func (s *State) idleBytes() int64 {
	return int64(s.cache.idle)*s.blockBytes() + int64(s.cache.ckpts)*s.RecurrentBytesPerSlot()
}

// SupersedePrefixes retires the namespaces of adapter under a revision
// other than revision: a new revision's KV differs, so their entries can
// never be reused again. Idle entries go now, the others as their last
// sequence ends. It returns the bytes evicted now.
func (s *State) SupersedePrefixes(adapter, revision string) int64 {
	var freed int64
	for k, sp := range s.cache.spaces {
		if k.Adapter == adapter && k.Revision != revision {
			delete(s.cache.spaces, k)
			sp.retired = true
			freed += s.evictIdle(sp, timing.PrefixEvictSuperseded)
		}
	}
	return freed
}

// PrefixStats returns the cache's state and counters.
func (s *State) PrefixStats() timing.PrefixCacheStats {
	c := &s.cache
	st := c.stats
	st.Enabled = c.on
	st.LimitBytes = c.limit
	st.Bytes = int64(c.cached)*s.blockBytes() + int64(c.ckpts)*s.RecurrentBytesPerSlot()
	st.IdleBytes = s.idleBytes()
	st.Blocks = c.cached
	st.BlockLen = kvBlockLen
	return st
}

// unlink removes n from its parent's children.
func (c *prefixCache) unlink(n *prefixNode) {
	p := n.parent
	for i, m := range p.children {
		if m == n {
			last := len(p.children) - 1
			p.children[i] = p.children[last]
			p.children[last] = nil
			p.children = p.children[:last]
			break
		}
	}
	n.parent = nil
	c.cached--
}

// evict drops n, an idle leaf, for reason; its block goes to the free
// list. Unless another entry holds its KV (subsumed), the cache remembers
// that it held a continuation there, for the stop reason of a later miss.
func (s *State) evict(n *prefixNode, reason timing.PrefixEvict) {
	c := &s.cache
	if reason != timing.PrefixEvictSubsumed {
		c.ghosts.add(ghostKey(n.parent, n.toks[:min(ghostTokens, len(n.toks))]))
	}
	c.unlink(n)
	c.idle--
	n.blk.node = nil
	s.free = append(s.free, n.blk)
	n.blk = nil
	c.stats.Evictions[reason]++
	c.stats.EvictedBytes[reason] += uint64(s.blockBytes() + s.dropCheckpoint(n))
}

// dropCheckpoint drops n's recurrent-state checkpoint, if it has one (its
// buffer kept for the next sequences, as a released slot's), and returns
// its bytes.
func (s *State) dropCheckpoint(n *prefixNode) int64 {
	if n.ckpt == nil {
		return 0
	}
	s.recFree = append(s.recFree, n.ckpt)
	n.ckpt = nil
	s.cache.ckpts--
	return s.RecurrentBytesPerSlot()
}

// dropPath evicts n and its ancestors while they are idle leaves (a
// retired namespace's path when its last sequence ended).
func (s *State) dropPath(n *prefixNode) {
	for n != nil && n.parent != nil && n.blk.refs == 0 && len(n.children) == 0 {
		p := n.parent
		s.evict(n, timing.PrefixEvictSuperseded)
		n = p
	}
}

// evictIdle evicts every idle entry of sp (nil: of every namespace) and
// returns their bytes.
func (s *State) evictIdle(sp *prefixSpace, reason timing.PrefixEvict) int64 {
	return s.evictLRU(s.cache.roots(sp), -1, reason)
}

// roots are the trees of sp, or of every namespace when sp is nil.
func (c *prefixCache) roots(sp *prefixSpace) []*prefixNode {
	if sp != nil {
		return []*prefixNode{&sp.root}
	}
	roots := make([]*prefixNode, 0, len(c.spaces))
	for _, sp := range c.spaces {
		roots = append(roots, &sp.root)
	}
	return roots
}

// evictLRU evicts the idle leaves under roots, least recently used first
// and a parent once it is an idle leaf, until at most keep bytes of idle
// entries and checkpoints remain (keep < 0: none of them), and returns the
// bytes evicted. An idle entry's whole subtree is idle (a sequence using a
// block uses its ancestors), so every idle entry under roots is reached;
// checkpoints on entries in use go last, when the bound still does not
// hold.
func (s *State) evictLRU(roots []*prefixNode, keep int64, reason timing.PrefixEvict) int64 {
	c := &s.cache
	before := s.idleBytes()
	var h lruHeap
	var walk func(n *prefixNode)
	walk = func(n *prefixNode) {
		for _, ch := range n.children {
			walk(ch)
		}
		if n.parent != nil && n.blk.refs == 0 && len(n.children) == 0 {
			h = append(h, n)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	heap.Init(&h)
	for (keep < 0 || s.idleBytes() > keep) && h.Len() > 0 {
		n := heap.Pop(&h).(*prefixNode)
		p := n.parent
		s.evict(n, reason)
		if p.parent != nil && p.blk.refs == 0 && len(p.children) == 0 {
			heap.Push(&h, p)
		}
	}
	if c.ckpts > 0 && (keep < 0 || s.idleBytes() > keep) {
		var drop func(n *prefixNode)
		drop = func(n *prefixNode) {
			for _, ch := range n.children {
				drop(ch)
			}
			if keep < 0 || s.idleBytes() > keep {
				c.stats.EvictedBytes[reason] += uint64(s.dropCheckpoint(n))
			}
		}
		for _, r := range roots {
			drop(r)
		}
	}
	return before - s.idleBytes()
}

// lruHeap orders idle leaves by their latest use.
type lruHeap []*prefixNode

func (h lruHeap) Len() int           { return len(h) }
func (h lruHeap) Less(i, j int) bool { return h[i].used < h[j].used }
func (h lruHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lruHeap) Push(x any)        { *h = append(*h, x.(*prefixNode)) }
func (h *lruHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return n
}

// ghostTokens is how many of an evicted entry's first tokens name it, and
// ghostMin the fewest a remembered entry needs: enough that prompts which
// share only their opening (BOS, a template's first tokens) do not look
// evicted.
const (
	ghostTokens = 16
	ghostMin    = 8
)

// ghostKey names the continuation of node that begins with toks.
func ghostKey(node *prefixNode, toks []int) uint64 {
	return hashToks(node.hash^0x5bd1e9955bd1e995, toks)
}

// evicted reports whether an entry under node that rest begins with was
// evicted (and is still remembered).
func (c *prefixCache) evicted(node *prefixNode, rest []int) bool {
	for k := min(ghostTokens, len(rest)); k >= ghostMin; k-- {
		if c.ghosts.has(ghostKey(node, rest[:k])) {
			return true
		}
	}
	return false
}

// ghostCap bounds the evicted continuations remembered.
const ghostCap = 4096

// ghostSet remembers the latest ghostCap evicted continuations, so that a
// miss where the cache once held the prompt's continuation says evicted,
// not uncached.
type ghostSet struct {
	set  map[uint64]struct{}
	ring []uint64
	next int
}

func (g *ghostSet) add(k uint64) {
	if g.set == nil {
		g.set = make(map[uint64]struct{}, ghostCap)
		g.ring = make([]uint64, 0, ghostCap)
	}
	if _, ok := g.set[k]; ok {
		return
	}
	if len(g.ring) < ghostCap {
		g.ring = append(g.ring, k)
	} else {
		delete(g.set, g.ring[g.next])
		g.ring[g.next] = k
		g.next = (g.next + 1) % ghostCap
	}
	g.set[k] = struct{}{}
}

func (g *ghostSet) has(k uint64) bool {
	_, ok := g.set[k]
	return ok
}
