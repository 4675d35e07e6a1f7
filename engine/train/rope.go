package train

import (
	"math"

	"github.com/kiln-ai/kiln/engine/llama"
)

// ropeTab holds the rotary cosines and sines of positions [0, n), computed
// as the serving forward computes them (float64 angles, rounded to F).
type ropeTab[F float] struct {
	half     int // RotaryDims/2: the pairs a head turns
	head     int // HeadDim: the stride of the heads
	neox     bool
	cos, sin []F // [pos*half + i]
}

func (r *ropeTab[F]) grow(c llama.Config, factors []float32, n int) {
	hd := c.RotaryDims()
	half := hd / 2
	if r.half == half && len(r.cos) >= n*half {
		return
	}
	r.half, r.head, r.neox = half, c.HeadDim(), c.Rope == llama.RopeNeoX
	r.cos, r.sin = make([]F, n*half), make([]F, n*half)
	for i, f := range llama.RopeFreqs(c, factors) {
		for p := range n {
			s, co := math.Sincos(float64(p) * f)
			r.cos[p*half+i], r.sin[p*half+i] = F(co), F(s)
		}
	}
}

// apply rotates every head of vec for position pos (with partial rotary,
// the first RotaryDims values of each head); inverse rotates the other
// way, which is the backward pass of apply (the rotation is orthogonal).
func (r *ropeTab[F]) apply(vec []F, pos int, inverse bool) {
	n := r.half
	cos, sin := r.cos[pos*n:(pos+1)*n], r.sin[pos*n:(pos+1)*n]
	for h := 0; h+r.head <= len(vec); h += r.head {
		head := vec[h : h+2*n]
		for i, c := range cos {
			s := sin[i]
			if inverse {
				s = -s
			}
			i0, i1 := 2*i, 2*i+1
			if r.neox {
				i0, i1 = i, i+n
			}
			v0, v1 := head[i0], head[i1]
			head[i0] = v0*c - v1*s
			head[i1] = v0*s + v1*c
		}
	}
}

// rmsNorm writes x·w/rms(x) into out and returns 1/rms(x).
func rmsNorm[F float](out, x []F, w []float32, eps float32) F {
	ss := float64(dot(x, x))/float64(len(x)) + float64(eps)
	inv := F(1 / math.Sqrt(ss))
	for i, v := range x {
		out[i] = F(w[i]) * (inv * v)
	}
	return inv
}

// rmsNormBack adds to dx the gradient through out = x·w·inv given dout:
// dx_i += inv·w_i·dout_i − x_i·inv³·Σ_j(dout_j·w_j·x_j)/n.
func rmsNormBack[F float](dx, x, dout []F, w []float32, inv F) {
	var s F
	for j, v := range x {
		s += dout[j] * F(w[j]) * v
	}
	k := inv * inv * inv * s / F(len(x))
	for i, v := range x {
		dx[i] += inv*F(w[i])*dout[i] - v*k
	}
}
