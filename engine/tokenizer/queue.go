package tokenizer

// Priority queues for the merge loops.

// spmQueue is a binary heap of spmBigram, first by spmBigram.before. It is written out
// per element type so that the comparison inlines.
type spmQueue struct{ items []spmBigram }

func (q *spmQueue) reset()   { q.items = q.items[:0] }
func (q *spmQueue) len() int { return len(q.items) }

func (q *spmQueue) push(x spmBigram) {
	q.items = append(q.items, x)
	h := q.items
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *spmQueue) pop() spmBigram {
	h := q.items
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	q.items = h
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top
}

// bpeQueue is a binary heap of bpeMerge, first by bpeMerge.before. It is written out
// per element type so that the comparison inlines.
type bpeQueue struct{ items []bpeMerge }

func (q *bpeQueue) reset()   { q.items = q.items[:0] }
func (q *bpeQueue) len() int { return len(q.items) }

func (q *bpeQueue) push(x bpeMerge) {
	q.items = append(q.items, x)
	h := q.items
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *bpeQueue) pop() bpeMerge {
	h := q.items
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	q.items = h
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top
}
