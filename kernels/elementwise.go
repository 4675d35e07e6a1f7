package kernels

import "math"

// RMSNorm writes x normalised by its root mean square and scaled by weight
// into out (out may alias x).
func RMSNorm(out, x, weight []float32, eps float32) {
	var ss float32
	for _, v := range x {
		ss += v * v
	}
	ss /= float32(len(x))
	ss += eps
	s := float32(1 / math.Sqrt(float64(ss)))
	for i, v := range x {
		out[i] = weight[i] * (s * v)
	}
}

// Softmax replaces x by its softmax, computed stably.
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
	var sum float32
	for i, v := range x {
		e := float32(math.Exp(float64(v - maxv)))
		x[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range x {
		x[i] *= inv
	}
}

// SiLU replaces x by x*sigmoid(x).
func SiLU(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + float32(math.Exp(float64(-v))))
	}
}

// SwiGLU sets h[i] = silu(h[i]) * g[i], the gated feed-forward activation.
func SwiGLU(h, g []float32) {
	g = g[:len(h)]
	for i, v := range h {
		h[i] = v / (1 + float32(math.Exp(float64(-v)))) * g[i]
	}
}

// RoPE rotates adjacent pairs (vec[i], vec[i+1]) of every head of vec by
// the rotary angle of position pos, as llama2.c and ggml's normal rope mode
// do: for pair offset j within a head, the angle is pos * theta^(-j/headDim).
func RoPE(vec []float32, headDim, pos int, theta float32) {
	for i := 0; i+1 < len(vec); i += 2 {
		j := i % headDim
		freq := 1 / math.Pow(float64(theta), float64(j)/float64(headDim))
		sin, cos := math.Sincos(float64(pos) * freq)
		fcos, fsin := float32(cos), float32(sin)
		v0, v1 := vec[i], vec[i+1]
		vec[i] = v0*fcos - v1*fsin
		vec[i+1] = v0*fsin + v1*fcos
	}
}

// Dot returns the inner product of a and b[:len(a)].
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// Axpy sets y[i] += alpha*x[i].
func Axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}
