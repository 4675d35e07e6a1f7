package sampling

import (
	"cmp"
	"math"
	"slices"
)

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
//
// The steps: a histogram of the candidates' first digits picks the digit
// where the running mass reaches the target; the candidates at or above it
// hold the nucleus, those at it are still in the running; later digits
// narrow those down to a few, which are sorted to find the last one in.
func (s *Sampler) nucleus(cand []int32, probs []float32, sum float64) (uint64, float64, []int32) {
	p := s.cfg.TopP
	if !(p > 0 && p < 1) {
		return 0, sum, nil
	}
	target := float64(p) * sum
	mass := s.firstDigitMass(cand, probs)
	var above float64 // the mass of the keys above the digits left to choose
	d, ok := chooseDigit(mass, target, &above)
	if !ok {
		return 0, sum, nil
	}
	memb, act := s.atOrAbove(cand, probs, uint64(d))
	act = s.narrow(act, probs, target, &above)
	thr, total := lastIn(act, probs, target, above)
	return thr, total, memb
}

// firstDigitMass returns the histogram of the candidates' masses by the
// first digit of their rank keys. Over a flat distribution most weights
// share a few digits: alternate ids go to two histograms, so that each add
// does not wait for the one before it.
func (s *Sampler) firstDigitMass(cand []int32, probs []float32) *[digitMask + 1]float64 {
	if s.mass == nil {
		s.mass = new([2][digitMask + 1]float64)
	}
	mass, odd := &s.mass[0], &s.mass[1]
	clear(mass[:])
	clear(odd[:])
	if cand != nil {
		for _, id := range cand {
			if p := probs[id]; p > 0 {
				mass[digit(p, int(id), firstShift)] += float64(p)
			}
		}
		return mass
	}
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
	return mass
}

// atOrAbove returns, in id (or top-k) order, the candidates with weight
// whose first digit is at least want (they hold the nucleus) and those
// whose first digit is want (still in the running).
func (s *Sampler) atOrAbove(cand []int32, probs []float32, want uint64) (memb, act []int32) {
	size := len(probs)
	if cand != nil {
		size = len(cand)
	}
	if cap(s.act) < size {
		s.act, s.memb = make([]int32, size), make([]int32, size)
	}
	memb, act = s.memb[:size], s.act[:size]
	nm, na := 0, 0
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
	return memb[:nm], act[:na]
}

// narrow keeps, digit by digit below the first, the candidates of act at
// the digit where the running mass reaches target, until a few are left.
func (s *Sampler) narrow(act []int32, probs []float32, target float64, above *float64) []int32 {
	mass := &s.mass[0]
	for shift := firstShift - digitBits; len(act) > 32; shift = max(shift-digitBits, 0) {
		clear(mass[:])
		for _, id := range act {
			mass[digit(probs[id], int(id), shift)] += float64(probs[id])
		}
		d, _ := chooseDigit(mass, target, above)
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
	return act
}

// lastIn sorts the few candidates left most probable first and returns the
// rank key of the one at which above plus their mass reaches target, and
// that mass; the last one when rounding never lets it.
func lastIn(act []int32, probs []float32, target, above float64) (uint64, float64) {
	slices.SortFunc(act, func(a, b int32) int {
		return cmp.Compare(rankKey(probs[b], int(b)), rankKey(probs[a], int(a)))
	})
	for _, id := range act {
		m := float64(probs[id])
		if above+m >= target {
			return rankKey(probs[id], int(id)), above + m
		}
		above += m
	}
	last := act[len(act)-1]
	return rankKey(probs[last], int(last)), above
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
