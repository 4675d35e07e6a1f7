package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kiln-ai/kiln/kernels"
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
	probs []float32                  // softmax over the candidates, indexed by token id
	cand  []int32                    // the top-k candidates' ids
	act   []int32                    // the nucleus's radix select: ids still in the running
	memb  []int32                    // the nucleus's radix select: ids that may be in it
	mass  *[2][digitMask + 1]float64 // the radix select's histograms
	pen   *penalties                 // nil unless cfg.penalized()
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
		return kernels.ArgMax(logits)
	}
	n := len(logits)
	// Scratch is sized on first use, for what the configuration needs:
	// a 128k vocabulary's id lists are 512 KiB each.
	if cap(s.probs) < n {
		s.probs = make([]float32, n)
	}
	probs := s.probs[:n]
	inv := 1 / s.cfg.Temperature

	// Softmax at the temperature over the candidates: every id (cand nil,
	// the vocabulary-wide pass in the kernels) or the top k by logit.
	var cand []int32
	var sum float64
	if k := s.cfg.TopK; k > 0 && k < n {
		if cap(s.cand) < k {
			s.cand = make([]int32, 0, k)
		}
		cand = topK(s.cand[:0], logits, k)
		maxv := float32(math.Inf(-1))
		for _, id := range cand {
			if v := logits[id]; v > maxv { // false for NaN
				maxv = v
			}
		}
		if math.IsInf(float64(maxv), 0) { // no finite candidate, or a certain one
			return kernels.ArgMax(logits)
		}
		for _, id := range cand {
			p := float32(0)
			if d := (logits[id] - maxv) * inv; d <= 0 { // false for NaN
				p = expNeg(d)
			}
			probs[id] = p
			sum += float64(p)
		}
	} else {
		maxv := logits[kernels.ArgMax(logits)]
		if maxv != maxv || math.IsInf(float64(maxv), 0) {
			return kernels.ArgMax(logits)
		}
		sum = kernels.ExpScaleSum(probs, logits, maxv, inv)
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return kernels.ArgMax(logits)
	}
	thr, total, memb := s.nucleus(cand, probs, sum)
	if !(total > 0) {
		return kernels.ArgMax(logits)
	}

	// The draw walks the candidates (or the list that holds the nucleus) in
	// id or top-k order; the nucleus is the candidates whose rank key is at
	// least thr.
	r := s.rng.Float64() * total
	var acc float64
	last := -1
	if memb == nil && cand == nil {
		// Eight weights at a time until the block that holds r: their sum
		// is a tree, so the walk does not wait on an add per weight.
		i := 0
		for ; i+8 <= len(probs); i += 8 {
			b := probs[i : i+8 : i+8]
			blk := ((float64(b[0]) + float64(b[1])) + (float64(b[2]) + float64(b[3]))) +
				((float64(b[4]) + float64(b[5])) + (float64(b[6]) + float64(b[7])))
			if r < acc+blk {
				break
			}
			acc += blk
		}
		for ; i < len(probs); i++ {
			if p := probs[i]; p > 0 {
				acc += float64(p)
				if r < acc {
					return i
				}
			}
		}
		for id := len(probs) - 1; id >= 0; id-- { // rounding
			if probs[id] > 0 {
				return id
			}
		}
	} else {
		if memb == nil {
			memb = cand
		}
		for _, id := range memb {
			if p := probs[id]; p > 0 && rankKey(p, int(id)) >= thr {
				acc += float64(p)
				last = int(id)
				if r < acc {
					return int(id)
				}
			}
		}
	}
	if last < 0 {
		return kernels.ArgMax(logits)
	}
	return last // rounding: the last candidate with weight
}

// rankKey orders candidates for the nucleus: by weight (a positive float32's
// bits order as its value does), then the lower id first.
func rankKey(p float32, id int) uint64 {
	return uint64(math.Float32bits(p))<<32 | uint64(^uint32(id))
}

// digit is the digit of (p, id)'s rank key at shift.
func digit(p float32, id, shift int) uint64 { return rankKey(p, id) >> shift & digitMask }

// The nucleus is found by a radix select on rankKey instead of a sort:
// over a flat distribution (a high temperature, an uncertain model) nearly
// the whole vocabulary has weight, and sorting 32k candidates took 1-9 ms a
// token. The first digit is a weight's bits above bit 19 (its exponent and
// five bits of mantissa: a weight is at most 1, so under 2048 values); each
// later one is digitBits of the key.
const (
	firstShift = 32 + 19
	digitBits  = 11
	digitMask  = 1<<digitBits - 1
)

// nucleus returns the rank key of the least probable candidate in the
// nucleus (0 when top_p is off: every candidate), the nucleus's mass and, in
// id (or top-k) order, a list of candidates that holds the nucleus (nil:
// every candidate). The nucleus is the shortest run of candidates, most
// probable first and the lower id first on ties, whose mass reaches top_p
// of sum, the mass of every candidate (positive and finite). cand nil means
// every id.
func (s *Sampler) nucleus(cand []int32, probs []float32, sum float64) (uint64, float64, []int32) {
	p := s.cfg.TopP
	if !(p > 0 && p < 1) {
		return 0, sum, nil
	}
	target := float64(p) * sum
	if s.mass == nil {
		s.mass = new([2][digitMask + 1]float64)
	}
	mass := &s.mass[0]

	// First digit: over every candidate. Over a flat distribution most
	// weights share a few digits: alternate ids go to two histograms, so
	// that each add does not wait for the one before it.
	clear(s.mass[0][:])
	clear(s.mass[1][:])
	if cand == nil {
		odd := &s.mass[1]
		i := 0
		for ; i+1 < len(probs); i += 2 {
			if p := probs[i]; p > 0 {
				mass[digit(p, i, firstShift)] += float64(p)
			}
			if p := probs[i+1]; p > 0 {
				odd[digit(p, i+1, firstShift)] += float64(p)
			}
		}
		if i < len(probs) {
			if p := probs[i]; p > 0 {
				mass[digit(p, i, firstShift)] += float64(p)
			}
		}
		for d, m := range odd {
			mass[d] += m
		}
	} else {
		for _, id := range cand {
			if p := probs[id]; p > 0 {
				mass[digit(p, int(id), firstShift)] += float64(p)
			}
		}
	}
	var above float64 // the mass of the keys above the digits left to choose
	d, ok := chooseDigit(mass, target, &above)
	if !ok {
		return 0, sum, nil
	}
	// The candidates at or above that digit hold the nucleus; the ones at
	// it are still in the running.
	size := len(probs)
	if cand != nil {
		size = len(cand)
	}
	if cap(s.act) < size {
		s.act, s.memb = make([]int32, size), make([]int32, size)
	}
	memb, act := s.memb[:size], s.act[:size]
	nm, na := 0, 0
	want := uint64(d)
	if cand == nil {
		for id, p := range probs {
			if b := digit(p, id, firstShift); p > 0 && b >= want {
				memb[nm] = int32(id)
				nm++
				if b == want {
					act[na] = int32(id)
					na++
				}
			}
		}
	} else {
		for _, id := range cand {
			if p := probs[id]; p > 0 {
				if b := digit(p, int(id), firstShift); b >= want {
					memb[nm] = id
					nm++
					if b == want {
						act[na] = id
						na++
					}
				}
			}
		}
	}
	memb, act = memb[:nm], act[:na]

	// Later digits: over the candidates still in the running.
	for shift := firstShift - digitBits; len(act) > 32; shift = max(shift-digitBits, 0) {
		clear(mass[:])
		for _, id := range act {
			mass[digit(probs[id], int(id), shift)] += float64(probs[id])
		}
		d, _ := chooseDigit(mass, target, &above)
		kept := act[:0]
		for _, id := range act {
			if digit(probs[id], int(id), shift) == uint64(d) {
				kept = append(kept, id)
			}
		}
		act = kept
		if shift == 0 {
			break
		}
	}
	// The few left in order, most probable first.
	slices.SortFunc(act, func(a, b int32) int {
		return cmp.Compare(rankKey(probs[b], int(b)), rankKey(probs[a], int(a)))
	})
	for _, id := range act {
		m := float64(probs[id])
		if above+m >= target {
			return rankKey(probs[id], int(id)), above + m, memb
		}
		above += m
	}
	last := act[len(act)-1]
	return rankKey(probs[last], int(last)), above, memb
}

// chooseDigit returns the digit, highest first, at which above plus the
// digits' masses reaches target, adding the masses of the digits above it
// to above; the lowest digit with weight if rounding never lets it; false
// if no digit has weight.
func chooseDigit(mass *[digitMask + 1]float64, target float64, above *float64) (int, bool) {
	lowest := -1
	for d := digitMask; d >= 0; d-- {
		m := mass[d]
		if m == 0 {
			continue
		}
		if *above+m >= target {
			return d, true
		}
		*above += m
		lowest = d
	}
	if lowest < 0 {
		return 0, false
	}
	*above -= mass[lowest]
	return lowest, true
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
