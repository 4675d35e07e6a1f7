package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// symbol is one piece of a word during merging: a span of the text (SPM) or
// a token id (BPE), linked to its live neighbours.
type symbol struct {
	start, n   int // SPM: the span text[start:start+n]; n == 0 once merged away
	prev, next int // neighbours, -1 at the ends
	id         int // the token the symbol is now; -1 once merged away (BPE) or when none (SPM)
}

// spmBigram is a candidate merge of two adjacent SPM symbols.
type spmBigram struct {
	score       float32
	left, right int
	size        int
	merged      int // the piece the two make
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
		syms = append(syms, symbol{start: off, n: n, id: t.spmCharID(text[off : off+n])})
		off += n
	}
	st.syms = syms
	start := 0
	for i := 1; i <= len(syms); i++ {
		if i == len(syms) || (t.spmSplit && isSpaceMarker(text, syms[i]) && !isSpaceMarker(text, syms[i-1])) {
			out = t.spmMerge(out, syms[start:i], text, &st.spmQ)
			start = i
		}
	}
	return out
}

func isSpaceMarker(text []byte, s symbol) bool {
	return s.n == len(spaceMarker) && string(text[s.start:s.start+s.n]) == spaceMarker
}

// spmMerge runs the merge loop over one run of symbols and appends its
// tokens.
func (t *Tokenizer) spmMerge(out []int, syms []symbol, text []byte, q *spmQueue) []int {
	for i := range syms {
		syms[i].prev, syms[i].next = i-1, i+1
	}
	syms[len(syms)-1].next = -1
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
		l.id = b.merged
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		t.spmPush(q, syms, text, l.prev, b.left)
		t.spmPush(q, syms, text, b.left, l.next)
	}
	for i := 0; i != -1; i = syms[i].next {
		if syms[i].id >= 0 {
			out = append(out, syms[i].id)
			continue
		}
		out = t.appendBytes(out, text[syms[i].start:syms[i].start+syms[i].n])
	}
	return out
}

func (t *Tokenizer) spmPush(q *spmQueue, syms []symbol, text []byte, left, right int) {
	if left < 0 || right < 0 {
		return
	}
	l, r := &syms[left], &syms[right]
	var id int
	var ok bool
	if l.id >= 0 && r.id >= 0 {
		id, ok = t.spmPairs[mergeKey(l.id, r.id)]
	} else {
		// A character outside the vocabulary may still start a piece.
		id, ok = t.ids[string(text[l.start:l.start+l.n+r.n])]
		ok = ok && t.encodable(id)
	}
	if !ok {
		return
	}
	q.push(spmBigram{score: t.scores[id], left: left, right: right, size: l.n + r.n, merged: id})
}

// spmCharID is the piece of one initial character, -1 when it has none.
func (t *Tokenizer) spmCharID(c []byte) int {
	if len(c) == 1 && c[0] < utf8.RuneSelf {
		return t.asciiID[c[0]]
	}
	if id, ok := t.ids[string(c)]; ok && t.encodable(id) {
		return id
	}
	return -1
}

// buildSPMPairs indexes every way to write an encodable piece as two
// encodable pieces split at a character boundary.
func (t *Tokenizer) buildSPMPairs() {
	for c := range t.asciiID {
		t.asciiID[c] = -1
		if id, ok := t.ids[string(rune(c))]; ok && t.encodable(id) {
			t.asciiID[c] = id
		}
	}
	t.spmPairs = make(map[uint64]int, 2*len(t.pieces))
	t.spmSplit = true
	for id, p := range t.pieces {
		if !t.encodable(id) || t.ids[p] != id {
			continue
		}
		if strings.Contains(strings.TrimLeft(p, spaceMarker), spaceMarker) {
			t.spmSplit = false
		}
		for k := 1; k < len(p); k++ {
			if !utf8.RuneStart(p[k]) {
				continue
			}
			l, ok1 := t.ids[p[:k]]
			r, ok2 := t.ids[p[k:]]
			if ok1 && ok2 && t.encodable(l) && t.encodable(r) {
				t.spmPairs[mergeKey(l, r)] = id
			}
		}
	}
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
