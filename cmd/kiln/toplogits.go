package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kiln-ai/kiln/engine/llama"
)

// topLogits runs the prompt through slot 0 of s (with s's adapter) in a
// single forward step (every prompt position in one batch, as the
// engine's prefill does) and returns the k largest raw logits after the
// last position as [id, logit] pairs, largest first (ties: smaller id
// first). It is the checkable half of `kiln generate --top-logits`: the
// reference outputs of other engines (llama.cpp, a float64 numpy pass) are
// stated the same way. The slot keeps its cache, so an engine over s that
// then serves the prompt meets scratch and cache already in memory, as
// llama-bench's timed runs meet their context after its warm-up run (the
// engine writes every position before it reads it).
func topLogits(s *llama.State, prompt []int, k int) ([][2]float64, error) {
	if len(prompt) > s.SeqLen() {
		return nil, fmt.Errorf("generate: prompt of %d tokens exceeds the context of %d", len(prompt), s.SeqLen())
	}
	rows := make([]llama.Row, len(prompt))
	for i, id := range prompt {
		if id < 0 || id >= s.VocabSize() {
			return nil, fmt.Errorf("generate: prompt token %d outside the vocabulary [0, %d)", id, s.VocabSize())
		}
		rows[i] = llama.Row{Pos: i, Token: id}
	}
	rows[len(rows)-1].Logits = true
	logits := make([]float32, s.VocabSize())
	s.Forward(rows, [][]float32{logits})
	return largest(logits, k), nil
}

// largest returns the k largest values of v as [index, value] pairs in
// descending order, ties broken by the smaller index.
func largest(v []float32, k int) [][2]float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[b], v[a]) })
	k = min(k, len(idx))
	out := make([][2]float64, k)
	for i, id := range idx[:k] {
		out[i] = [2]float64{float64(id), float64(v[id])}
	}
	return out
}
