package sampling

import (
	"math"
	"math/rand/v2"

	"github.com/kiln-ai/kiln/kernels"
)

// seedStream is the PCG stream constant; with the request's seed it fixes
// the whole random sequence, so a seeded request samples the same tokens
// whatever else is batched with it.
const seedStream = 0x9e3779b97f4a7c15

// Sampler chooses tokens from logits for one request. It owns its random
// source and scratch buffers, so sampling allocates nothing after the first
// call and one request's draws never depend on another's.
type Sampler struct {
	cfg   Params
	rng   *rand.Rand
	probs []float32                  // softmax over the candidates, indexed by token id
	cand  []int32                    // the top-k candidates' ids
	exps  []float32                  // the top-k candidates' logits, then their weights
	act   []int32                    // the nucleus's radix select: ids still in the running
	memb  []int32                    // the nucleus's radix select: ids that may be in it
	mass  *[2][digitMask + 1]float64 // the radix select's histograms
	pen   *penalties                 // nil unless cfg.penalized()
}

// New returns a sampler for p, which the caller has validated. Without
// HasSeed it draws a random seed. A temperature so small that its
// reciprocal overflows float32 (a denormal) samples greedily, as the limit
// of the distribution is the argmax.
func New(p Params) *Sampler {
	seed := p.Seed
	if !p.HasSeed {
		seed = rand.Uint64()
	}
	if t := p.Temperature; t > 0 && math.IsInf(float64(1/t), 0) {
		p.Temperature = 0
	}
	s := &Sampler{cfg: p, rng: rand.New(rand.NewPCG(seed, seedStream))}
	if p.penalized() {
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

// Params returns the parameters the sampler runs with: New's, but for a
// denormal temperature, which reads 0.
func (s *Sampler) Params() Params { return s.cfg }

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
// the top-k and nucleus cuts at the temperature. Any step that cannot form
// a distribution falls back to the argmax.
func (s *Sampler) pick(logits []float32) int {
	if s.cfg.Temperature == 0 || s.cfg.TopK == 1 || len(logits) < 2 {
		return kernels.ArgMax(logits)
	}
	probs := s.probsFor(len(logits))
	cand, sum, ok := s.softmax(logits, probs)
	if !ok {
		return kernels.ArgMax(logits)
	}
	thr, total, memb := s.nucleus(cand, probs, sum)
	if !(total > 0) {
		return kernels.ArgMax(logits)
	}
	if id := draw(s.rng.Float64()*total, probs, cand, memb, thr); id >= 0 {
		return id
	}
	return kernels.ArgMax(logits)
}

// probsFor returns the weights' scratch for a vocabulary of n. Scratch is
// sized on first use, for what the configuration needs: a 128k
// vocabulary's id lists are 512 KiB each.
func (s *Sampler) probsFor(n int) []float32 {
	if cap(s.probs) < n {
		s.probs = make([]float32, n)
	}
	return s.probs[:n]
}
