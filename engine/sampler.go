package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// seedStream is the PCG stream constant; with the request's seed it fixes
// the whole random sequence, so a seeded request samples the same tokens
// whatever else is batched with it.
const seedStream = 0x9e3779b97f4a7c15

// validate reports a sampling parameter out of range.
func (s Sampling) validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(float64(s.Temperature)) || math.IsInf(float64(s.Temperature), 0):
		return fmt.Errorf("%w: temperature %v must be finite and >= 0", ErrInvalidRequest, s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("%w: top_k %d must be >= 0", ErrInvalidRequest, s.TopK)
	case !(s.TopP >= 0 && s.TopP <= 1):
		return fmt.Errorf("%w: top_p %v must be in [0, 1]", ErrInvalidRequest, s.TopP)
	}
	return s.validatePenalties(0)
}

// Sampler chooses tokens from logits for one request. It owns its random
// source and scratch buffers, so sampling allocates nothing after the first
// call and one request's draws never depend on another's.
type Sampler struct {
	cfg   Sampling
	rng   *rand.Rand
	probs []float32  // softmax over the candidates, indexed by token id
	cand  []int32    // candidate token ids
	pen   *penalties // nil unless cfg.penalized()
}

// NewSampler returns a sampler for cfg. Without HasSeed it draws a random
// seed. A temperature so small that its reciprocal overflows float32 (a
// denormal) samples greedily, as the limit of the distribution is the
// argmax.
func NewSampler(cfg Sampling) *Sampler {
	seed := cfg.Seed
	if !cfg.HasSeed {
		seed = rand.Uint64()
	}
	if t := cfg.Temperature; t > 0 && math.IsInf(float64(1/t), 0) {
		cfg.Temperature = 0
	}
	s := &Sampler{cfg: cfg, rng: rand.New(rand.NewPCG(seed, seedStream))}
	if cfg.penalized() {
		s.pen = &penalties{}
	}
	return s
}

// SetPrompt gives the sampler the request's prompt, which the repetition
// penalty counts as seen. The sampler keeps prompt until its first Sample.
func (s *Sampler) SetPrompt(prompt []int) {
	if s.pen != nil {
		s.pen.prompt = prompt
	}
}

// Greedy reports whether the sampler always takes the argmax.
func (s *Sampler) Greedy() bool { return s.cfg.Temperature == 0 }

// Sample returns the next token id. logits is used as scratch space when
// the sampler adjusts logits (penalties.go) or is not greedy; it is not
// modified otherwise. Logits that are NaN never win and have no
// probability; when the distribution cannot be formed (no finite logit, an
// infinite one, a mass that is not a positive finite number) Sample takes
// the argmax instead: it never fails.
func (s *Sampler) Sample(logits []float32) int {
	if s.pen == nil {
		return s.pick(logits)
	}
	s.pen.apply(&s.cfg, logits)
	id := s.pick(logits)
	s.pen.record(id)
	return id
}

// pick chooses a token from logits: argmax when greedy, else a draw after
// the top-k and nucleus cuts at the temperature.
func (s *Sampler) pick(logits []float32) int {
	if s.cfg.Temperature == 0 || s.cfg.TopK == 1 || len(logits) < 2 {
		return argmax(logits)
	}
	n := len(logits)
	if cap(s.probs) < n {
		s.probs = make([]float32, n)
		s.cand = make([]int32, n)
	}
	probs := s.probs[:n]
	cand := s.cand[:0]

	// Candidates: every id, or the top k by logit.
	k := s.cfg.TopK
	if k > 0 && k < n {
		cand = topK(cand, logits, k)
	} else {
		for i := range n {
			cand = append(cand, int32(i))
		}
	}

	// Softmax over the candidates at the temperature.
	maxv := float32(math.Inf(-1))
	for _, id := range cand {
		if v := logits[id]; v > maxv { // false for NaN
			maxv = v
		}
	}
	if math.IsInf(float64(maxv), 0) { // no finite candidate, or a certain one
		return argmax(logits)
	}
	inv := 1 / s.cfg.Temperature
	var sum float64
	for _, id := range cand {
		p := float32(0)
		if d := (logits[id] - maxv) * inv; d <= 0 { // false for NaN
			p = expNeg(d)
		}
		probs[id] = p
		sum += float64(p)
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return argmax(logits)
	}
	cand, total := s.nucleus(cand, sum)
	if len(cand) == 0 || !(total > 0) {
		return argmax(logits)
	}

	r := s.rng.Float64() * total
	var acc float64
	for _, id := range cand {
		acc += float64(probs[id])
		if r < acc {
			return int(id)
		}
	}
	return int(cand[len(cand)-1]) // rounding: the last candidate
}

// nucleus keeps the most probable candidates whose mass reaches top_p
// (all of them when top_p is off) and returns them with their mass. sum
// is the mass of every candidate, positive and finite.
func (s *Sampler) nucleus(cand []int32, sum float64) ([]int32, float64) {
	p := s.cfg.TopP
	if !(p > 0 && p < 1) {
		return cand, sum
	}
	probs := s.probs
	// A candidate below (1-p)/(n-1) of the mass cannot be in the nucleus
	// (llama2.c's cut), which keeps the sort short.
	if len(cand) > 1 {
		// The most probable candidate has weight 1 (logit - max = 0) and
		// always stays.
		cutoff := min(float32((1-float64(p))/float64(len(cand)-1)*sum), 1)
		kept := cand[:0]
		for _, id := range cand {
			if probs[id] >= cutoff {
				kept = append(kept, id)
			}
		}
		cand = kept
	}
	s.cand = cand
	sort.Sort(byProb{s})
	target := float64(p) * sum
	var acc float64
	for i, id := range cand {
		acc += float64(probs[id])
		if acc >= target {
			return cand[:i+1], acc
		}
	}
	return cand, acc
}

// argmax returns the index of the largest value, the lowest one on ties (as
// llama2.c does). NaN values never win; with no other value (or none at
// all) it returns 0.
func argmax(x []float32) int {
	best := -1
	for i, v := range x {
		if v == v && (best < 0 || v > x[best]) {
			best = i
		}
	}
	return max(best, 0)
}

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
	for i := range int32(len(logits)) {
		if len(h) < k {
			h = append(h, i)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if !worse(h[j], h[p]) {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
			continue
		}
		if worse(h[0], i) {
			h[0] = i
			down(0)
		}
	}
	return h
}

// byProb sorts the sampler's candidates by descending probability, lower id
// first on ties, so the nucleus is deterministic.
type byProb struct{ s *Sampler }

func (b byProb) Len() int      { return len(b.s.cand) }
func (b byProb) Swap(i, j int) { b.s.cand[i], b.s.cand[j] = b.s.cand[j], b.s.cand[i] }
func (b byProb) Less(i, j int) bool {
	a, c := b.s.cand[i], b.s.cand[j]
	pa, pc := b.s.probs[a], b.s.probs[c]
	if pa != pc {
		return pa > pc
	}
	return a < c
}

// expNeg is e^x for x <= 0 in float32 precision (relative error about
// 2e-7), several times faster than math.Exp: softmax over a 32k vocabulary
// calls it once per id and token. It reduces x = k ln2 + r with |r| <=
// ln2/2 and evaluates e^r by its degree-6 Taylor polynomial.
func expNeg(x float32) float32 {
	if x < -87 {
		return 0
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693145751953125
		ln2lo = 1.42860682030941723212e-6
	)
	k := float32(math.Floor(float64(x*log2e + 0.5)))
	r := (x - k*ln2hi) - k*ln2lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}
