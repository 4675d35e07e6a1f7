package sampling

import "github.com/kiln-ai/kiln/kernels"

// topK appends to dst the ids of the k largest logits (ties to the lower
// id), using dst's first k entries as a min-heap.
func topK(dst []int32, logits []float32, k int) []int32 {
	h := dst[:0]
	// less orders by "worse": lower logit, or equal logit and higher id.
	worse := func(a, b int32) bool {
		if logits[a] != logits[b] {
			return logits[a] < logits[b]
		}
		return a > b
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && worse(h[r], h[l]) {
				m = r
			}
			if !worse(h[m], h[i]) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	n := int32(len(logits))
	i := int32(0)
	for ; i < n && len(h) < k; i++ {
		h = append(h, i)
		for j := len(h) - 1; j > 0; {
			p := (j - 1) / 2
			if !worse(h[j], h[p]) {
				break
			}
			h[j], h[p] = h[p], h[j]
			j = p
		}
	}
	// The rest meet the heap's worst; thr is its logit, and a logit below
	// it (the common case, never true of a NaN) cannot enter.
	thr := logits[h[0]]
	for {
		i += int32(kernels.NotBelow(logits[i:], thr))
		if i >= n {
			break
		}
		if worse(h[0], i) {
			h[0] = i
			down(0)
			thr = logits[h[0]]
		}
		i++
	}
	return h
}
