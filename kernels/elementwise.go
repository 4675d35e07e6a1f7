package kernels

import (
	"fmt"
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

// rope rotates adjacent pairs (vec[i], vec[i+1]) of every head of vec by
// the rotary angle of position pos, as llama2.c and ggml's normal rope mode
// do: for pair offset j within a head, the angle is pos * theta^(-j/headDim).
// The sines and cosines are computed once per pair offset, not once per head;
// a ropeTable avoids even that.
func rope(vec []float32, headDim, pos int, theta float32) {
	if headDim <= 0 || headDim%2 != 0 || headDim > 2*maxStackPairs {
		ropeSlow(vec, headDim, pos, theta)
		return
	}
	var cos, sin [maxStackPairs]float32
	n := headDim / 2
	for k := range n {
		cos[k], sin[k] = ropeAngle(2*k, headDim, pos, theta)
	}
	rotate(vec, cos[:n], sin[:n])
}

// maxStackPairs bounds the head size rope handles with tables on the stack.
const maxStackPairs = 512

// ropeAngle is the cosine and sine of pair offset j at position pos,
// computed in float64 exactly as the reference does.
func ropeAngle(j, headDim, pos int, theta float32) (float32, float32) {
	freq := 1 / math.Pow(float64(theta), float64(j)/float64(headDim))
	sin, cos := math.Sincos(float64(pos) * freq)
	return float32(cos), float32(sin)
}

// rotate applies the per-pair cos/sin (len headDim/2) to every head of vec.
func rotate(vec, cos, sin []float32) {
	hd := 2 * len(cos)
	sin = sin[:len(cos)]
	for h := 0; h+hd <= len(vec); h += hd {
		head := vec[h : h+hd]
		for k := range cos {
			c, s := cos[k], sin[k]
			v0, v1 := head[2*k], head[2*k+1]
			head[2*k] = v0*c - v1*s
			head[2*k+1] = v0*s + v1*c
		}
	}
	if rest := len(vec) % hd; rest > 1 {
		tail := vec[len(vec)-rest:]
		for k := 0; 2*k+1 < len(tail); k++ {
			c, s := cos[k], sin[k]
			v0, v1 := tail[2*k], tail[2*k+1]
			tail[2*k] = v0*c - v1*s
			tail[2*k+1] = v0*s + v1*c
		}
	}
}

// ropeSlow is the per-pair reference, kept for odd or huge head sizes.
func ropeSlow(vec []float32, headDim, pos int, theta float32) {
	if headDim <= 0 {
		return
	}
	for i := 0; i+1 < len(vec); i += 2 {
		fcos, fsin := ropeAngle(i%headDim, headDim, pos, theta)
		v0, v1 := vec[i], vec[i+1]
		vec[i] = v0*fcos - v1*fsin
		vec[i+1] = v0*fsin + v1*fcos
	}
}

// ropeTable holds the rotary cosines and sines of every position below a
// limit for one head size and base, so that applying rope is a pure
// multiply-add pass. It is read-only after newRopeTable and safe for
// concurrent use.
type ropeTable struct {
	headDim, maxPos int
	theta           float32
	cos, sin        []float32 // [pos*headDim/2 + k]
}

// newRopeTable precomputes positions [0,maxPos) for heads of headDim (even)
// values and base theta; it costs maxPos*headDim*4 bytes.
func newRopeTable(headDim, maxPos int, theta float32) (*ropeTable, error) {
	if headDim <= 0 || headDim%2 != 0 {
		return nil, fmt.Errorf("kernels: rope head size %d is not a positive even number", headDim)
	}
	if maxPos < 0 {
		return nil, fmt.Errorf("kernels: rope max position %d is negative", maxPos)
	}
	n := headDim / 2
	t := &ropeTable{headDim: headDim, maxPos: maxPos, theta: theta,
		cos: make([]float32, maxPos*n), sin: make([]float32, maxPos*n)}
	for p := range maxPos {
		for k := range n {
			t.cos[p*n+k], t.sin[p*n+k] = ropeAngle(2*k, headDim, p, theta)
		}
	}
	return t, nil
}

// HeadDim is the head size the table was built for.
func (t *ropeTable) HeadDim() int { return t.headDim }

// Apply rotates every head of vec for position pos; it gives exactly
// rope(vec, t.HeadDim(), pos, theta), falling back to it past the table.
func (t *ropeTable) Apply(vec []float32, pos int) {
	if pos < 0 || pos >= t.maxPos {
		rope(vec, t.headDim, pos, t.theta)
		return
	}
	n := t.headDim / 2
	rotate(vec, t.cos[pos*n:(pos+1)*n], t.sin[pos*n:(pos+1)*n])
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
