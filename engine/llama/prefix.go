package llama

import (
	"hash/maphash"

	"github.com/kiln-ai/kiln/internal/timing"
)

// The prefix cache: the KV blocks of sequences, kept after they end and
// shared while they run, in one radix tree of blocks per namespace (model
// state, adapter and revision: KV computed under one adapter is not the
// KV of another). A node is one block: its tokens (kvBlockLen of them, or
// fewer for a sequence's last block) and the block. A new sequence starts
// with the longest cached prefix of its prompt (Reuse): whole blocks are
// shared by reference, and the block where the match ends is copied up to
// the exact token (the first n positions of a block depend only on its
// first n tokens), so a follow-up turn reuses everything the previous turn
// wrote, not only its whole blocks. A running sequence's blocks are in the
// tree as they are written (a live entry is the block its owner is still
// writing; others copy from it, never write it), so a request that begins
// with a system prompt another request is still decoding behind reuses
// it. Two sequences that computed the same whole block keep one (the
// later adopts the earlier's).
//
// Hybrid models (recurrent layers beside attention) fit the same tree:
// their recurrent state cannot be cut at an arbitrary token, so such a
// model keeps a state checkpoint on the entry where a sequence ended (its
// frozen tail: a prompt and its generation, the next chat turn's prefix),
// and a match may stop only at an entry with a checkpoint
// (PrefixSourceCheckpoint; a longer match without one stops at
// no_checkpoint). A checkpoint is the whole recurrent state of a slot; it
// counts against the cache's bound like idle blocks (prefix_ckpt.go).
//
// Entries no sequence uses (idle) are evicted least recently used first,
// leaves before their parents, when the idle bytes pass the bound the
// engine sets (the configured bytes or the free KV budget); a trim drops
// them all; a superseded adapter revision's are dropped with it. A
// running sequence's blocks are never evicted.

// PrefixKey names a namespace of the cache: the adapter the KV is
// computed under and its revision (BaseAdapter's for the base model).
type PrefixKey struct {
	Adapter, Revision string
}

// prefixSpace is one namespace's tree.
type prefixSpace struct {
	key     PrefixKey
	root    prefixNode
	retired bool // superseded: its entries go as soon as nothing uses them
}

// prefixNode is one cached block (the root: none).
type prefixNode struct {
	parent   *prefixNode
	children []*prefixNode
	toks     []int
	blk      *kvBlock
	owner    *kvSlot // the sequence still writing it; nil once frozen or whole
	hash     uint64  // of the path's tokens through this node (whole nodes and the root)
	used     uint64  // the cache's clock at its latest use
	writer   int     // the slot that wrote it
	// ckpt is a hybrid's recurrent state after the node's last token, kept
	// when a sequence ended there (a frozen tail); nil otherwise.
	ckpt []float32
}

// prefixCache is the State's cache; its zero value is off.
type prefixCache struct {
	on     bool
	spaces map[PrefixKey]*prefixSpace
	clock  uint64
	cached int   // blocks in the trees
	idle   int   // of which no sequence references
	ckpts  int   // recurrent-state checkpoints (a hybrid's)
	limit  int64 // the idle bytes allowed; negative: unbounded
	seed   maphash.Seed
	ghosts ghostSet
	stats  timing.PrefixCacheStats
}

// SetPrefixCache turns the prefix cache on or off. Turning it off drops
// every idle entry (as a trim does); sequences running keep their blocks.
func (s *State) SetPrefixCache(on bool) {
	c := &s.cache
	if on && c.spaces == nil {
		c.spaces = make(map[PrefixKey]*prefixSpace)
		c.seed = maphash.MakeSeed()
		c.limit = -1
	}
	if !on && c.on {
		s.evictIdle(nil, timing.PrefixEvictTrim)
	}
	c.on = on
}

// PrefixMidSequence reports whether a sequence may resume from any cached
// position, including one another sequence is still writing; a hybrid's
// resumes only where a sequence ended (its recurrent state's checkpoint).
func (s *State) PrefixMidSequence() bool { return s.rec == nil }

// PrefixCacheOn reports whether the prefix cache is on.
func (s *State) PrefixCacheOn() bool { return s.cache.on }

// Reuse begins a new sequence in slot (ending the slot's previous one)
// with the longest cached prefix of prompt under key, and reports what it
// reused: the positions [0, Cached) hold the prompt's KV, and the caller
// feeds the prompt from Cached. The prompt's last token is never reused
// (its logits are needed), so Cached is below len(prompt). With the cache
// off it reuses nothing and the sequence is not cached.
func (s *State) Reuse(slot int, key PrefixKey, prompt []int) timing.PrefixUse {
	kv := &s.slots[slot]
	if s.rec != nil {
		s.checkpoint(slot)
	}
	if len(kv.blocks) > 0 || len(kv.toks) > 0 || kv.space != nil {
		s.releaseSlot(kv)
	}
	s.releaseRec(slot)
	use := timing.PrefixUse{Prefilled: len(prompt), Stop: timing.PrefixStopOff}
	c := &s.cache
	if !c.on {
		return use
	}
	sp := c.space(key)
	kv.space = sp
	limit := max(len(prompt)-1, 0)
	path, best, bestN := match(&sp.root, prompt, limit)
	var ck *prefixNode
	matched := len(path)*kvBlockLen + bestN
	if s.rec != nil {
		path, best, bestN, ck = checkpointCut(path, best, bestN)
	}
	node, same := &sp.root, true
	now := c.tick()
	for _, n := range path {
		s.ref(n.blk)
		kv.blocks = append(kv.blocks, n.blk)
		kv.toks = append(kv.toks, n.toks...)
		kv.tail, node = n, n
		n.used = now
		same = same && n.writer == slot
	}
	pos := len(path) * kvBlockLen
	use.Stop = c.stopReason(sp, node, best, bestN, prompt, pos, limit)
	if pos+bestN < matched {
		use.Stop = timing.PrefixStopNoCheckpoint
	}
	if bestN > 0 {
		// The block where the match ends: copied up to the exact token,
		// and this sequence's live entry from there.
		b := s.copyBlock(best.blk, bestN)
		kv.blocks = append(kv.blocks, b)
		kv.toks = append(kv.toks, prompt[pos:pos+bestN]...)
		c.adopt(node, b, kv, slot, prompt[pos:pos+bestN])
		best.used = now
		same = same && best.writer == slot
		pos += bestN
	}
	use.Cached, use.Prefilled = pos, len(prompt)-pos
	if pos > 0 {
		use.Source = timing.PrefixSourceShared
		if same {
			use.Source = timing.PrefixSourceSlot
		}
		if ck != nil {
			s.restoreCheckpoint(slot, ck, pos)
			use.Source = timing.PrefixSourceCheckpoint
		}
		c.stats.Hits++
	}
	c.stats.Lookups++
	c.stats.QueriedTokens += uint64(len(prompt))
	c.stats.HitTokens += uint64(pos)
	return use
}

// minOpening is the fewest tokens a prompt's first block must share with
// a cached one, when they differ inside it, to be reused: every prompt
// shares its opening (BOS, the chat template's first tokens) with all
// others, which would make every miss a hit of a few tokens that
// diverged, and a copy of so few saves nothing. Past the first block any
// match is a real shared prefix and is reused to the token.
const minOpening = 16

// matchChild returns the child of node that prompt[pos:limit) continues
// into, and how many tokens of it match; (nil, 0) when none does or when
// only a prompt's opening matches (minOpening).
func matchChild(node *prefixNode, prompt []int, pos, limit int) (*prefixNode, int) {
	best, n := longestChild(node, prompt[pos:min(pos+kvBlockLen, limit)])
	if pos == 0 && n > 0 && n < minOpening && n < len(best.toks) && n < limit {
		return nil, 0
	}
	return best, n
}

// longestChild returns node's child sharing the longest prefix with seg,
// and that length.
func longestChild(node *prefixNode, seg []int) (*prefixNode, int) {
	var best *prefixNode
	bestN := 0
	for _, ch := range node.children {
		if k := commonPrefix(ch.toks, seg); k > bestN {
			best, bestN = ch, k
		}
	}
	return best, bestN
}

func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// stopReason says why reuse of prompt stopped at pos (before a partial
// match of bestN tokens of best, if any) under node.
func (c *prefixCache) stopReason(sp *prefixSpace, node, best *prefixNode, bestN int, prompt []int, pos, limit int) timing.PrefixStop {
	switch {
	case pos+bestN >= limit:
		return timing.PrefixStopPromptEnd
	case bestN > 0 && bestN < len(best.toks):
		return timing.PrefixStopDiverged
	case bestN == 0 && c.evicted(node, prompt[pos:]):
		return timing.PrefixStopEvicted
	case bestN == 0 && pos > 0 && len(node.children) > 0:
		return timing.PrefixStopDiverged // (at the root: nothing in common, uncached)
	}
	for k, other := range c.spaces {
		if k != sp.key && matchLen(other, prompt, limit) > pos+bestN {
			return timing.PrefixStopOtherAdapter
		}
	}
	return timing.PrefixStopUncached
}

// match walks prompt[:limit) down from root: the entries of the whole
// blocks it matches (path), then the child where the match ends inside a
// block and how many tokens of it match (nil, 0: none).
func match(root *prefixNode, prompt []int, limit int) (path []*prefixNode, end *prefixNode, n int) {
	node, pos := root, 0
	for pos < limit {
		best, k := matchChild(node, prompt, pos, limit)
		if k < kvBlockLen {
			return path, best, k
		}
		path = append(path, best)
		node, pos = best, pos+kvBlockLen
	}
	return path, nil, 0
}

// matchLen is the number of prompt tokens a Reuse under sp would reuse.
func matchLen(sp *prefixSpace, prompt []int, limit int) int {
	path, _, n := match(&sp.root, prompt, limit)
	return len(path)*kvBlockLen + n
}

// space returns key's namespace, made on first use.
func (c *prefixCache) space(key PrefixKey) *prefixSpace {
	sp := c.spaces[key]
	if sp == nil {
		sp = &prefixSpace{key: key}
		var h maphash.Hash
		h.SetSeed(c.seed)
		h.WriteString(key.Adapter)
		h.WriteByte(0)
		h.WriteString(key.Revision)
		sp.root.hash = h.Sum64()
		c.spaces[key] = sp
	}
	return sp
}

func (c *prefixCache) tick() uint64 {
	c.clock++
	return c.clock
}

// adopt makes b, just written or copied with toks by slot's sequence kv,
// that sequence's live entry under parent.
func (c *prefixCache) adopt(parent *prefixNode, b *kvBlock, kv *kvSlot, slot int, toks []int) {
	n := &prefixNode{parent: parent, blk: b, owner: kv, writer: slot, used: c.tick()}
	n.toks = append(make([]int, 0, kvBlockLen), toks...)
	b.node = n
	parent.children = append(parent.children, n)
	c.cached++
	kv.tail = n
}

// wrote records that slot's sequence kv wrote position pos: its block's
// entry grows by the token, a new block becomes a live entry, and a block
// that became whole is published (or replaced by an equal one already
// cached).
func (s *State) wrote(slot int, kv *kvSlot, pos int) {
	c := &s.cache
	if kv.space == nil {
		return
	}
	bi := pos / kvBlockLen
	b := kv.blocks[bi]
	n := b.node
	if n == nil {
		parent := &kv.space.root
		if bi > 0 {
			parent = kv.tail
			if parent == nil || kv.blocks[bi-1].node != parent || len(parent.toks) < kvBlockLen {
				s.detach(kv) // not a path of the tree: stays private
				return
			}
		}
		c.adopt(parent, b, kv, slot, nil)
		n = b.node
	}
	if n.owner != kv || len(n.toks) != pos%kvBlockLen {
		s.detach(kv)
		return
	}
	n.toks = append(n.toks, kv.toks[pos])
	n.used = c.tick()
	if len(n.toks) == kvBlockLen {
		s.whole(kv, bi, n)
	}
}

// whole publishes n, the block bi of kv that its sequence just filled:
// the entry is frozen, a shorter entry it extends is dropped, and when an
// equal whole block is cached already the sequence adopts that one.
func (s *State) whole(kv *kvSlot, bi int, n *prefixNode) {
	c := &s.cache
	n.owner = nil
	n.hash = hashToks(n.parent.hash, n.toks)
	parent := n.parent
	for _, m := range parent.children {
		if m == n || len(m.toks) != kvBlockLen || m.owner != nil || m.hash != n.hash || commonPrefix(m.toks, n.toks) != kvBlockLen {
			continue
		}
		s.ref(m.blk)
		kv.blocks[bi] = m.blk
		kv.tail = m
		m.used = n.used
		c.unlink(n)
		n.blk.node = nil
		s.unref(n.blk)
		return
	}
	s.dropSubsumed(n)
}

// dropSubsumed evicts n's idle frozen siblings whose tokens n's begin
// with: n holds the same KV and more.
func (s *State) dropSubsumed(n *prefixNode) {
	for i := 0; i < len(n.parent.children); i++ {
		m := n.parent.children[i]
		if m != n && m.owner == nil && m.blk.refs == 0 && len(m.children) == 0 && m.ckpt == nil && len(m.toks) <= len(n.toks) && commonPrefix(m.toks, n.toks) == len(m.toks) {
			s.evict(m, timing.PrefixEvictSubsumed)
			i--
		}
	}
}

// freeze ends kv's live entry: the block it was writing stays cached as
// it stands (a tail shorter than a block), unless a sibling holds its
// tokens and more: then it is dropped now when nothing uses it (else the
// idle bound takes it in its turn).
func (s *State) freeze(kv *kvSlot) {
	n := kv.tail
	if n == nil || n.owner != kv {
		return
	}
	n.owner = nil
	for _, m := range n.parent.children {
		if m != n && len(m.toks) >= len(n.toks) && commonPrefix(m.toks, n.toks) == len(n.toks) {
			if n.blk.refs == 0 && len(n.children) == 0 && n.ckpt == nil {
				s.evict(n, timing.PrefixEvictSubsumed)
			}
			return
		}
	}
	s.dropSubsumed(n)
}

// hashToks extends the path hash h by toks.
func hashToks(h uint64, toks []int) uint64 {
	for _, t := range toks {
		h ^= uint64(t) + 0x9e3779b97f4a7c15
		h *= 0x100000001b3
		h ^= h >> 29
	}
	return h
}
