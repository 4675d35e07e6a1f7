package kernels

import "fmt"

// Blocked attention of a prefill chunk: four query rows of one head meet
// the slot's keys and values together, so each cached key and value is
// loaded once per four rows instead of once per row, and one call covers
// every position instead of one Dot or Axpy call per position.

// AttnScores4 sets out[4p+r] = q[r] · keys[p*stride : p*stride+len(q[0])]
// for p < n and r < 4: four queries of one head (of equal length; they
// may repeat) against n cached keys stride values apart, interleaved four
// per key. It panics, like an index out of range, when keys or out are
// too short.
func AttnScores4(out []float32, q *[4][]float32, keys []float32, stride, n int) {
	hs := checkAttn4(q, keys, stride, n)
	if len(out) < 4*n {
		panic(fmt.Sprintf("kernels: AttnScores4 out has %d values, need %d", len(out), 4*n))
	}
	if n == 0 || attnScoresArch(out, q, keys, stride, n, hs) {
		return
	}
	for p := range n {
		k := keys[p*stride : p*stride+hs]
		for r := range 4 {
			out[4*p+r] = dotGeneric(q[r][:hs], k)
		}
	}
}

// AttnValues4 sets o[r] = sum over p < n of a[4p+r] * vals[p*stride :
// p*stride+len(o[0])] for r < 4, adding positions in order with one
// fused multiply-add each (as Axpy does): the weighted values of four
// query rows, with their weights interleaved as AttnScores4 writes its
// scores. A zero weight leaves a row's sum unchanged, which is how a
// causal row skips the positions after its own. The four outputs must
// not overlap.
func AttnValues4(o *[4][]float32, a []float32, vals []float32, stride, n int) {
	for r := range 4 {
		clear(o[r])
	}
	AttnValues4Add(o, a, vals, stride, n)
}

// AttnValues4Add is AttnValues4 adding to the outputs' values instead of
// setting them: a sum over positions split into runs (the blocks of a
// paged KV cache) with one call per run, in order, is bit for bit the
// sum of one call over all of them.
func AttnValues4Add(o *[4][]float32, a []float32, vals []float32, stride, n int) {
	hs := checkAttn4(o, vals, stride, n)
	if len(a) < 4*n {
		panic(fmt.Sprintf("kernels: AttnValues4 has %d weights, need %d", len(a), 4*n))
	}
	if n == 0 || attnValuesArch(o, a, vals, stride, n, hs) {
		return
	}
	for p := range n {
		v := vals[p*stride : p*stride+hs]
		for r := range 4 {
			Axpy(a[4*p+r], v, o[r][:hs])
		}
	}
}

// checkAttn4 returns the head size (the length of rows[0]) after checking
// that every row has it and that n rows of it fit in data stride apart.
func checkAttn4(rows *[4][]float32, data []float32, stride, n int) int {
	hs := len(rows[0])
	for _, r := range rows {
		if len(r) != hs {
			panic(fmt.Sprintf("kernels: attention rows of lengths %d and %d", hs, len(r)))
		}
	}
	checkAttn1(data, hs, stride, n)
	return hs
}

// AttnScores1 sets out[p] = Dot(q, keys[p*stride : p*stride+len(q)]) for
// p < n, bit for bit: one query of one head (a decode row) against n
// cached keys stride values apart, in one call.
func AttnScores1(out, q, keys []float32, stride, n int) {
	hs := len(q)
	checkAttn1(keys, hs, stride, n)
	out = out[:n]
	if n == 0 || attnScores1Arch(out, q, keys, stride, n) {
		return
	}
	for p := range out {
		out[p] = Dot(q, keys[p*stride:p*stride+hs])
	}
}

// AttnValues1 adds a[p] * vals[p*stride : p*stride+len(o)] to o for p <
// n, in position order, bit for bit as n Axpy calls would: the weighted
// values of one query row, in one call.
func AttnValues1(o, a, vals []float32, stride, n int) {
	hs := len(o)
	checkAttn1(vals, hs, stride, n)
	a = a[:n]
	if n == 0 || attnValues1Arch(o, a, vals, stride, n) {
		return
	}
	for p, w := range a {
		Axpy(w, vals[p*stride:p*stride+hs], o)
	}
}

// checkAttn1 checks that n rows of hs values fit in data stride apart.
func checkAttn1(data []float32, hs, stride, n int) {
	if n < 0 || stride < hs || (n > 0 && len(data) < (n-1)*stride+hs) {
		panic(fmt.Sprintf("kernels: %d positions of %d values %d apart need more than %d values", n, hs, stride, len(data)))
	}
}
