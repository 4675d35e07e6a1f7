package tokenizer

// bpeMerge is a candidate merge of two adjacent BPE symbols; the ids
// recorded at push time detect entries made stale by later merges.
type bpeMerge struct {
	rank            int
	left, right     int
	leftID, rightID int
	merged          int
}

// before orders the queue: the lowest rank first, then the leftmost.
func (a bpeMerge) before(b bpeMerge) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

func mergeKey(left, right int) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

// bpeWord appends the tokens of one pre-tokenized word: its bytes become
// byte-level symbols, then the adjacent pair with the lowest merge rank (the
// leftmost on ties) merges until no pair has a rule, as Hugging Face's BPE
// model and llama.cpp's llm_tokenizer_bpe do.
func (t *Tokenizer) bpeWord(out []int, w string, st *scratch) []int {
	if len(w) == 1 {
		return t.appendSymbol(out, t.byteSym[w[0]])
	}
	if t.ignoreMerges {
		st.text = appendByteLevel(st.text[:0], w)
		if id, ok := t.ids[string(st.text)]; ok && t.encodable(id) {
			return append(out, id)
		}
	}
	syms := st.syms[:0]
	for i := 0; i < len(w); i++ {
		syms = append(syms, symbol{id: t.byteSym[w[i]], prev: i - 1, next: i + 1})
	}
	syms[len(syms)-1].next = -1
	q := &st.bpeQ
	q.reset()
	for i := 1; i < len(syms); i++ {
		t.bpePush(q, syms, i-1, i)
	}
	for q.len() > 0 {
		m := q.pop()
		l := &syms[m.left]
		if l.id != m.leftID || l.next != m.right || syms[m.right].id != m.rightID {
			continue // stale: a side has merged since
		}
		r := &syms[m.right]
		l.id = m.merged
		l.next = r.next
		r.id = -1
		if r.next >= 0 {
			syms[r.next].prev = m.left
		}
		t.bpePush(q, syms, l.prev, m.left)
		t.bpePush(q, syms, m.left, l.next)
	}
	for i := 0; i != -1; i = syms[i].next {
		out = t.appendSymbol(out, syms[i].id)
	}
	st.syms = syms
	return out
}

// appendSymbol appends a final symbol; a byte missing from the vocabulary
// becomes the unknown token, or nothing.
func (t *Tokenizer) appendSymbol(out []int, id int) []int {
	switch {
	case id >= 0:
		return append(out, id)
	case t.unk >= 0:
		return append(out, t.unk)
	}
	return out
}

func (t *Tokenizer) bpePush(q *bpeQueue, syms []symbol, left, right int) {
	if left < 0 || right < 0 {
		return
	}
	l, r := syms[left].id, syms[right].id
	if l < 0 || r < 0 {
		return
	}
	v, ok := t.merges[mergeKey(l, r)]
	if !ok {
		return
	}
	q.push(bpeMerge{rank: int(v >> 32), left: left, right: right, leftID: l, rightID: r, merged: int(uint32(v))})
}
