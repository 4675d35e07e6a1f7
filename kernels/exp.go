package kernels

import "math"

// expf is e^x in float32 with Cephes' expf polynomial: a range reduction
// x = k*ln2 + r, |r| <= ln2/2, a degree-5 minimax polynomial for e^r and an
// exponent add for 2^k. Its relative error is under 2^-22 (about 2 ulp);
// outside the range where the result is a normal float32 (and for NaN) it
// defers to math.Exp. It is several times cheaper than the float64
// math.Exp, which dominated Softmax over a vocabulary and SwiGLU.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2Hi = 0.693359375
		ln2Lo = -2.12194440e-4
		lo    = -87.3365447505531 // below: subnormal results
		hi    = 88.3762626647949  // above: 2^k overflows
	)
	if !(x >= lo && x <= hi) {
		return float32(math.Exp(float64(x)))
	}
	fk := x * log2e
	var k int32
	if fk < 0 {
		k = int32(fk - 0.5)
	} else {
		k = int32(fk + 0.5)
	}
	kf := float32(k)
	r := x - kf*ln2Hi - kf*ln2Lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	// k is in [-126,127] here except at the very ends of the range, where
	// y*2^k is split in two steps to stay representable.
	if k < -125 || k > 126 {
		h := k / 2
		return y * pow2(h) * pow2(k-h)
	}
	return y * pow2(k)
}

// pow2 is 2^k for k in [-126,127].
func pow2(k int32) float32 { return math.Float32frombits(uint32(k+127) << 23) }
