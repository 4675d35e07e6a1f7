package llama

import "github.com/kiln-ai/kiln/internal/timing"

// The KV cache is paged: a slot's sequence is a list of blocks of
// kvBlockLen positions, and a block may be shared by several sequences
// (the prefix cache, prefix.go): the KV of a system prompt that sixteen
// requests begin with is held once. A block written by a sequence is its
// own until it is published; a published block is never written again, and
// a sequence that must write into one copies it first (copy on write).
// Attention reads a slot's keys and values block by block in position
// order, which sums bit for bit as over one contiguous cache
// (kernels.AttnValues4Add).

// kvBlockLen is the number of positions of one KV block: large enough that
// attention's per-block calls cost nothing next to their work, small enough
// that a partly shared block copies little.
const kvBlockLen = 64

// kvBlock holds kvBlockLen positions of every layer's keys and values:
// layer l's keys at data[2l*n : (2l+1)*n], its values after them (n =
// kvBlockLen x KVDim).
type kvBlock struct {
	data []float32
	refs int         // sequences whose slot lists it
	node *prefixNode // its prefix cache entry; nil while private to one sequence
}

// kvSlot is one sequence: its blocks in position order, the tokens of the
// positions written, and its place in the prefix cache.
type kvSlot struct {
	blocks []*kvBlock
	toks   []int // tokens of positions [0, len(toks)); -1 where unknown

	space *prefixSpace // the cache namespace its blocks are published in; nil: not cached
	tail  *prefixNode  // the entry of its last published or live block (nil: none yet)
}

// blockFloats is the length of one layer's keys (or values) in a block.
func (s *State) blockFloats() int { return kvBlockLen * s.m.Config.KVDim() }

// keys and vals are layer l's keys and values in b.
func (s *State) keys(b *kvBlock, l int) []float32 {
	n := s.blockFloats()
	return b.data[2*l*n : (2*l+1)*n]
}

func (s *State) vals(b *kvBlock, l int) []float32 {
	n := s.blockFloats()
	return b.data[(2*l+1)*n : (2*l+2)*n]
}

// blockBytes is the memory of one block.
func (s *State) blockBytes() int64 {
	return int64(kvBlockLen) * s.m.Config.KVBytesPerPos()
}

// newBlock returns an unused block, from the free list when it has one
// (memory already mapped: a fresh cache cost each request's prefill its
// page faults), referenced once.
func (s *State) newBlock() *kvBlock {
	var b *kvBlock
	if n := len(s.free); n > 0 {
		b = s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
	} else {
		b = &kvBlock{data: make([]float32, 2*s.m.Config.Layers*s.blockFloats())}
		s.allocated++
	}
	b.refs = 1
	return b
}

// ref adds a sequence's reference to b.
func (s *State) ref(b *kvBlock) {
	if b.refs == 0 && b.node != nil {
		s.cache.idle--
	}
	b.refs++
}

// unref drops one sequence's reference to b: a cached block no sequence
// uses is idle (evictable), an uncached one goes to the free list.
func (s *State) unref(b *kvBlock) {
	b.refs--
	if b.refs > 0 {
		return
	}
	if b.node != nil {
		s.cache.idle++
		return
	}
	s.free = append(s.free, b)
}

// copyBlock returns a private copy of the first n positions of b.
func (s *State) copyBlock(b *kvBlock, n int) *kvBlock {
	c := s.newBlock()
	kvDim := s.m.Config.KVDim()
	for l := range s.m.Config.Layers {
		copy(s.keys(c, l), s.keys(b, l)[:n*kvDim])
		copy(s.vals(c, l), s.vals(b, l)[:n*kvDim])
	}
	return c
}

// writable makes slot's position pos writable: the sequence is cut back to
// pos when it was longer (a rewrite), the blocks up to pos exist, and the
// block of pos is the slot's own (a published or shared one is copied
// first). It records tok as the position's token; the cache learns of it
// once the position's KV is written (State.wrote, after the step).
func (s *State) writable(slot, pos, tok int) {
	kv := &s.slots[slot]
	if pos < len(kv.toks) {
		s.truncate(slot, pos)
	}
	if pos > len(kv.toks) { // a gap: the sequence's tokens are unknown there, so it is not cached
		s.detach(kv)
		for len(kv.toks) < pos {
			kv.toks = append(kv.toks, -1)
		}
	}
	bi := pos / kvBlockLen
	for len(kv.blocks) <= bi { // a gap's blocks too: attention reads every position before pos
		kv.blocks = append(kv.blocks, s.newBlock())
	}
	if b := kv.blocks[bi]; b.refs > 1 || (b.node != nil && b.node.owner != kv) {
		s.detach(kv)
		kv.blocks[bi] = s.copyBlock(b, pos%kvBlockLen)
		s.unref(b)
	}
	kv.toks = append(kv.toks, tok)
}

// truncate cuts slot's sequence back to its first n positions. The
// sequence is no longer published (a rewrite is not the engine's way; a
// test's or a tool's), so the block of position n, if published, is copied
// before it is written.
func (s *State) truncate(slot, n int) {
	kv := &s.slots[slot]
	s.detach(kv)
	keep := (n + kvBlockLen - 1) / kvBlockLen
	for i := keep; i < len(kv.blocks); i++ {
		s.unref(kv.blocks[i])
		kv.blocks[i] = nil
	}
	kv.blocks = kv.blocks[:keep]
	kv.toks = kv.toks[:n]
}

// detach stops publishing slot kv's sequence: its live entry is frozen and
// later blocks stay private.
func (s *State) detach(kv *kvSlot) {
	s.freeze(kv)
	kv.space, kv.tail = nil, nil
}

// releaseSlot ends slot's sequence: its blocks are unreferenced, and its
// live entry is frozen for later sequences to reuse (or dropped with the
// rest of its path when its namespace was superseded).
func (s *State) releaseSlot(kv *kvSlot) {
	for i, b := range kv.blocks {
		s.unref(b)
		kv.blocks[i] = nil
	}
	s.freeze(kv)
	if sp := kv.space; sp != nil && sp.retired {
		s.dropPath(kv.tail)
	}
	kv.blocks = kv.blocks[:0]
	kv.toks = kv.toks[:0]
	kv.space, kv.tail = nil, nil
	s.fitIdle(timing.PrefixEvictCapacity) // the bound holds after a release too
}
