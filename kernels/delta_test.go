package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// deltaCase is n tokens of one head: q, k unit rows (q also scaled by
// 1/sqrt(dk)), v ~ N(0,1), g = log U(0.4,0.99) (or e^-30 a token when
// strong), beta ~ U(0.03,0.97), and a non-zero initial state.
type deltaCase struct {
	dk, dv, n        int
	q, k, v, g, beta []float32
	S                []float32
}

func newDeltaCase(rng *rand.Rand, dk, dv, n int, strong bool) deltaCase {
	c := deltaCase{dk: dk, dv: dv, n: n, g: make([]float32, n), beta: make([]float32, n)}
	unit := func(scale float64) []float32 {
		x := make([]float32, n*dk)
		for i := range n {
			var ss float64
			r := make([]float64, dk)
			for j := range r {
				r[j] = rng.NormFloat64()
				ss += r[j] * r[j]
			}
			for j := range r {
				x[i*dk+j] = float32(r[j] / math.Sqrt(ss) * scale)
			}
		}
		return x
	}
	c.q, c.k = unit(1/math.Sqrt(float64(dk))), unit(1)
	c.v = make([]float32, n*dv)
	for i := range c.v {
		c.v[i] = float32(rng.NormFloat64())
	}
	for i := range n {
		c.g[i] = float32(math.Log(0.4 + 0.59*rng.Float64()))
		if strong && i%3 != 1 {
			c.g[i] = -30 * float32(rng.Float64())
		}
		c.beta[i] = float32(0.03 + 0.94*rng.Float64())
	}
	c.S = make([]float32, dk*dv)
	for i := range c.S {
		c.S[i] = float32(0.3 * rng.NormFloat64())
	}
	return c
}

// ref runs the recurrent form in float64: the state after the n tokens
// and their outputs.
func (c deltaCase) ref() (S, out []float64) {
	dk, dv := c.dk, c.dv
	S = make([]float64, dk*dv)
	for i, s := range c.S {
		S[i] = float64(s)
	}
	out = make([]float64, c.n*dv)
	w := make([]float64, dv)
	for t := range c.n {
		eg, beta := math.Exp(float64(c.g[t])), float64(c.beta[t])
		clear(w)
		for i := range dk {
			for j := range dv {
				S[i*dv+j] *= eg
				w[j] += S[i*dv+j] * float64(c.k[t*dk+i])
			}
		}
		for i := range dk {
			for j := range dv {
				S[i*dv+j] += float64(c.k[t*dk+i]) * beta * (float64(c.v[t*dv+j]) - w[j])
				out[t*dv+j] += S[i*dv+j] * float64(c.q[t*dk+i])
			}
		}
	}
	return S, out
}

// within fails t unless got is want within tol times want's largest
// magnitude (at least 1).
func within(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	scale, worst, at := 1.0, 0.0, 0
	for i, w := range want {
		scale = max(scale, math.Abs(w))
		if d := math.Abs(float64(got[i]) - w); math.IsNaN(d) || d > worst {
			worst, at = d, i
		}
	}
	if !(worst <= tol*scale) {
		t.Errorf("%s[%d] = %v, want %v: max difference %.3g over a scale of %.3g", what, at, got[at], want[at], worst, scale)
	}
}

var deltaDims = [][2]int{{32, 32}, {64, 64}, {128, 128}, {128, 64}, {24, 40}, {20, 12}, {3, 5}}

// TestDeltaStep checks every path's DeltaStep, token after token, against
// the float64 recurrence, on head sizes with and without the assembly.
func TestDeltaStep(t *testing.T) {
	for _, name := range Paths() {
		p, err := parsePath(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deltaDims {
			for _, strong := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/dk=%d/dv=%d/strong=%v", name, d[0], d[1], strong), func(t *testing.T) {
					c := newDeltaCase(rand.New(rand.NewPCG(7, uint64(d[0]*d[1]))), d[0], d[1], 40, strong)
					wantS, wantOut := c.ref()
					S := slices.Concat(c.S, []float32{42})
					out := make([]float32, c.n*c.dv+1)
					out[c.n*c.dv] = 42
					for i := range c.n {
						o := out[i*c.dv : (i+1)*c.dv]
						deltaStep(p, S[:c.dk*c.dv], c.dk, c.dv, c.q[i*c.dk:], c.k[i*c.dk:], c.v[i*c.dv:], c.g[i], c.beta[i], o)
					}
					within(t, "out", out, wantOut, 1e-5)
					within(t, "S", S, wantS, 1e-5)
					if S[c.dk*c.dv] != 42 || out[c.n*c.dv] != 42 {
						t.Errorf("DeltaStep wrote past its state or output")
					}
				})
			}
		}
	}
}
