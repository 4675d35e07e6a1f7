package kernels

import (
	"math"
)

// RMSNorm writes x normalised by its root mean square and scaled by weight
// into out (out may alias x).
func RMSNorm(out, x, weight []float32, eps float32) {
	ss := Dot(x, x)
	ss /= float32(len(x))
	ss += eps
	s := float32(1 / math.Sqrt(float64(ss)))
	out, weight = out[:len(x)], weight[:len(x)]
	for i, v := range x {
		out[i] = weight[i] * (s * v)
	}
}

// Softmax replaces x by its softmax, computed stably; a weight that would
// be subnormal (under 2^-126) is 0.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	maxv := x[0]
	for _, v := range x[1:] {
		if v > maxv {
			maxv = v
		}
	}
	sum, ok := expSubSumArch(x, maxv)
	if !ok {
		sum = expSubSumGeneric(x, maxv)
	}
	inv := 1 / sum
	for i, v := range x {
		// A weight under the smallest normal float32 is 0: it adds
		// nothing a float32 sum of weighted values can show, and a
		// subnormal operand costs every multiply-add it meets a
		// microcode assist on Intel cores (the attention's value
		// products over 64 positions: 111 us instead of 0.67).
		if v *= inv; v < 0x1p-126 {
			v = 0
		}
		x[i] = v
	}
}

// SiLU replaces x by x*sigmoid(x).
func SiLU(x []float32) {
	if !siluArch(x) {
		siluGeneric(x)
	}
}

// Sigmoid replaces x by 1/(1+e^-x), with the exponential SiLU and
// Softmax use.
func Sigmoid(x []float32) {
	for i, v := range x {
		x[i] = 1 / (1 + expf(-v))
	}
}

func expSubSumGeneric(x []float32, sub float32) float32 {
	var sum float32
	for i, v := range x {
		e := expf(v - sub)
		x[i] = e
		sum += e
	}
	return sum
}

func siluGeneric(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + expf(-v))
	}
}

// SwiGLU sets h[i] = silu(h[i]) * g[i], the gated feed-forward activation.
func SwiGLU(h, g []float32) {
	if !swigluArch(h, g) {
		swigluGeneric(h, g)
	}
}

func swigluGeneric(h, g []float32) {
	g = g[:len(h)]
	for i, v := range h {
		h[i] = v / (1 + expf(-v)) * g[i]
	}
}

// Dot returns the inner product of a and b[:len(a)].
func Dot(a, b []float32) float32 {
	if s, ok := dotArch(a, b); ok {
		return s
	}
	return dotGeneric(a, b)
}

func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// Axpy sets y[i] += alpha*x[i].
func Axpy(alpha float32, x, y []float32) {
	if axpyArch(alpha, x, y) {
		return
	}
	axpyGeneric(alpha, x, y)
}

func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}
