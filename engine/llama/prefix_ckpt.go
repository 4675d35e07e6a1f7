package llama

// Recurrent-state checkpoints of a hybrid's prefix cache (prefix.go): the
// state a sequence ended with, on the entry of its last token.

// checkpointCut shortens a match (whole-block entries path, then n tokens
// of the partial entry best) to the deepest entry with a checkpoint that
// the match covers to its end: a hybrid can resume only there. It returns
// the shortened match and that entry (nil: nothing to resume from).
func checkpointCut(path []*prefixNode, best *prefixNode, n int) ([]*prefixNode, *prefixNode, int, *prefixNode) {
	if best != nil && best.ckpt != nil && n == len(best.toks) {
		return path, best, n, best
	}
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].ckpt != nil {
			return path[:i+1], nil, 0, path[i]
		}
	}
	return nil, nil, 0, nil
}

// restoreCheckpoint starts slot's recurrent state as n's checkpoint: the
// state after the first pos tokens of the sequence.
func (s *State) restoreCheckpoint(slot int, n *prefixNode, pos int) {
	r := &s.rec[slot]
	if r.data == nil {
		r.data = s.newRec()
	}
	copy(r.data, n.ckpt)
	r.pos = pos
}

// checkpoint keeps the recurrent state of slot's sequence, which ends now,
// on the cache entry of its last token, when the sequence is published
// whole (every position's tokens known, its blocks a path of the tree):
// the state's buffer moves to the entry, replacing any checkpoint there.
func (s *State) checkpoint(slot int) {
	kv, r := &s.slots[slot], &s.rec[slot]
	n, pos := kv.tail, len(kv.toks)
	if !s.cache.on || kv.space == nil || n == nil || r.data == nil || r.pos != pos || pos == 0 ||
		kv.blocks[(pos-1)/kvBlockLen].node != n || len(n.toks) != pos-(pos-1)/kvBlockLen*kvBlockLen {
		return
	}
	if kv.space.retired {
		return
	}
	s.dropCheckpoint(n)
	n.ckpt, r.data = r.data, nil
	s.cache.ckpts++
}
