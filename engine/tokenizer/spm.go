package tokenizer

// symbol is one piece of a word during merging: a span of the text (SPM) or
// a token id (BPE), linked to its live neighbours.
type symbol struct {
	start, n   int // SPM: the span text[start:start+n]; n == 0 once merged away
	prev, next int // neighbours, -1 at the ends
	id         int // BPE: the token the symbol is now, -1 once merged away
}

// spmBigram is a candidate merge of two adjacent SPM symbols.
type spmBigram struct {
	score       float32
	left, right int
	size        int
}

// before orders the queue: the highest score first, then the leftmost.
func (a spmBigram) before(b spmBigram) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

// spmEncode segments escaped text ("▁" for spaces) as llama.cpp's
// llm_tokenizer_spm does: start from UTF-8 characters and repeatedly merge
// the adjacent pair whose concatenation is the vocabulary piece with the
// highest score (the leftmost on ties); whatever is not a piece at the end
// falls back to <0xXX> byte tokens. Only pieces that text may produce
// (normal and user-defined) take part, never control or byte tokens.
func (t *Tokenizer) spmEncode(out []int, text []byte, st *scratch) []int {
	if len(text) == 0 {
		return out
	}
	syms := st.syms[:0]
	for off := 0; off < len(text); {
		n := min(utf8SeqLen(text[off]), len(text)-off)
		syms = append(syms, symbol{start: off, n: n, prev: len(syms) - 1, next: len(syms) + 1})
		off += n
	}
	syms[len(syms)-1].next = -1
	q := &st.spmQ
	q.reset()
	for i := 1; i < len(syms); i++ {
		t.spmPush(q, syms, text, i-1, i)
	}
	for q.len() > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // stale: one side has merged since
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		t.spmPush(q, syms, text, l.prev, b.left)
		t.spmPush(q, syms, text, b.left, l.next)
	}
	for i := 0; i != -1; i = syms[i].next {
		piece := text[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.ids[string(piece)]; ok && t.encodable(id) {
			out = append(out, id)
			continue
		}
		out = t.appendBytes(out, piece)
	}
	st.syms = syms
	return out
}

func (t *Tokenizer) spmPush(q *spmQueue, syms []symbol, text []byte, left, right int) {
	if left < 0 || right < 0 {
		return
	}
	start := syms[left].start
	size := syms[left].n + syms[right].n
	id, ok := t.ids[string(text[start:start+size])]
	if !ok || !t.encodable(id) {
		return
	}
	q.push(spmBigram{score: t.scores[id], left: left, right: right, size: size})
}

// utf8SeqLen is the length of the UTF-8 sequence a lead byte announces (1
// for a continuation or invalid byte), as llama.cpp's unicode_len_utf8.
func utf8SeqLen(b byte) int {
	switch {
	case b < 0xC0:
		return 1
	case b < 0xE0:
		return 2
	case b < 0xF0:
		return 3
	case b < 0xF8:
		return 4
	}
	return 1
}
