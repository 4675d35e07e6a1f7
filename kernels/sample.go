package kernels

import "math"

// The sampler's vocabulary-wide passes: an argmax for greedy decoding and
// the tempered exponentials of a softmax. Over a 32k vocabulary the pure-Go
// loops took 90 and 480 us a token, more than a whole decode step of a
// small model.

// ArgMax returns the index of the largest value in x, the lowest index on
// ties. NaN never wins; when x holds nothing else (or nothing) it returns 0.
func ArgMax(x []float32) int {
	m := maxNumber(x)
	i, done := indexArch(x, m)
	if i >= 0 {
		return i
	}
	for j, v := range x[done:] {
		if v == m {
			return done + j
		}
	}
	return 0 // every value is NaN
}

// NotBelow returns the index of the first value of x that is not below v
// (at least v, or NaN), or len(x) if there is none: a top-k scan skips the
// logits under its heap's worst with it.
func NotBelow(x []float32, v float32) int {
	i, done := notBelowArch(x, v)
	if i >= 0 {
		return i
	}
	for j, w := range x[done:] {
		if !(w < v) {
			return done + j
		}
	}
	return len(x)
}

// maxNumber is the largest value in x that is not NaN, -Inf if none is.
func maxNumber(x []float32) float32 {
	m, done := maxNumberArch(x)
	if done == 0 {
		m = float32(math.Inf(-1))
	}
	for _, v := range x[done:] {
		if v > m { // false for NaN
			m = v
		}
	}
	return m
}

// ExpScaleSum sets dst[i] = e^((x[i]-sub)*scale) for every i of x, for
// exponents of at most 0: 0 where the exponent is under -87 (the result
// would be under 2^-125) or NaN. It returns the float64 sum of dst. dst must
// be as long as x and may be x itself.
func ExpScaleSum(dst, x []float32, sub, scale float32) float64 {
	dst = dst[:len(x)]
	sum, done := expScaleSumArch(dst, x, sub, scale)
	for i := done; i < len(x); i++ {
		p := float32(0)
		if d := (x[i] - sub) * scale; d >= -87 { // false for NaN
			p = expf(d)
		}
		dst[i] = p
		sum += float64(p)
	}
	return sum
}
