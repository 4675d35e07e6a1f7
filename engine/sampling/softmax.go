package sampling

import (
	"math"

	"github.com/kiln-ai/kiln/kernels"
)

// softmax sets probs[id] to the unnormalized weight e^((logit-max)/T) of
// every candidate and returns the candidates and their total weight. The
// candidates are every id (cand nil) or, with a top-k cut, the k largest
// logits in heap order. Both go through the one exponential of the kernels
// (kernels.ExpScaleSum: 0 below e^-87 and for NaN). ok is false when no
// distribution can be formed: no finite candidate, an infinite one, or a
// total that is not a positive finite number.
func (s *Sampler) softmax(logits, probs []float32) (cand []int32, sum float64, ok bool) {
	inv := 1 / s.cfg.Temperature
	if k := s.cfg.TopK; k > 0 && k < len(logits) {
		cand = s.topK(logits, k)
		maxv := float32(math.Inf(-1))
		for _, id := range cand {
			if v := logits[id]; v > maxv { // false for NaN
				maxv = v
			}
		}
		if math.IsInf(float64(maxv), 0) { // no finite candidate, or a certain one
			return nil, 0, false
		}
		sum = s.expCandidates(probs, logits, cand, maxv, inv)
	} else {
		maxv := logits[kernels.ArgMax(logits)]
		if maxv != maxv || math.IsInf(float64(maxv), 0) {
			return nil, 0, false
		}
		sum = kernels.ExpScaleSum(probs, logits, maxv, inv)
	}
	return cand, sum, sum > 0 && !math.IsInf(sum, 0)
}

// topK returns the ids of the k largest logits in the sampler's scratch.
func (s *Sampler) topK(logits []float32, k int) []int32 {
	if cap(s.cand) < k {
		s.cand = make([]int32, 0, k)
	}
	return topK(s.cand[:0], logits, k)
}

// expCandidates sets probs[id] = e^((logits[id]-maxv)*inv) for the
// candidates: gathered into one run, so that the kernels' vectorized
// exponential serves them as it serves the whole vocabulary.
func (s *Sampler) expCandidates(probs, logits []float32, cand []int32, maxv, inv float32) float64 {
	if cap(s.exps) < len(cand) {
		s.exps = make([]float32, len(cand))
	}
	exps := s.exps[:len(cand)]
	for i, id := range cand {
		exps[i] = logits[id]
	}
	sum := kernels.ExpScaleSum(exps, exps, maxv, inv)
	for i, id := range cand {
		probs[id] = exps[i]
	}
	return sum
}
