package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestDotAxpyMatchGeneric compares the assembly Dot and Axpy with the Go
// loops for every length around the 8- and 32-wide steps.
func TestDotAxpyMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 0; n <= 70; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a, b := randVec(rng, n), randVec(rng, n+3) // b longer: only b[:len(a)] counts
			var scale float64
			for i := range a {
				scale += math.Abs(float64(a[i] * b[i]))
			}
			if got, want := Dot(a, b), dotGeneric(a, b); math.Abs(float64(got-want)) > 1e-6*scale {
				t.Errorf("Dot = %v, want %v", got, want)
			}
			y1, y2 := slices.Clone(b), slices.Clone(b)
			Axpy(0.75, a, y1)
			axpyGeneric(0.75, a, y2)
			if diff := cmp.Diff(y2, y1, cmpopts.EquateApprox(1e-6, 1e-6)); diff != "" {
				t.Errorf("Axpy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRMSNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 7, 64, 4097} {
		x, w := randVec(rng, n), randVec(rng, n)
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		s := 1 / math.Sqrt(ss/float64(n)+1e-5)
		want := make([]float32, n)
		for i := range want {
			want[i] = float32(float64(w[i]) * s * float64(x[i]))
		}
		got := make([]float32, n)
		RMSNorm(got, x, w, 1e-5)
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-5, 1e-6)); diff != "" {
			t.Errorf("n=%d (-want +got):\n%s", n, diff)
		}
		RMSNorm(x, x, w, 1e-5) // in place
		if diff := cmp.Diff(got, x); diff != "" {
			t.Errorf("n=%d in place differs (-want +got):\n%s", n, diff)
		}
	}
}

func TestSoftmaxSiLUSwiGLU(t *testing.T) {
	x := []float32{1000, 1001, 999, -5}
	Softmax(x)
	var want [4]float64
	var sum float64
	for i, v := range []float64{1, 2, 0, -1004} {
		want[i] = math.Exp(v - 2)
		sum += want[i]
	}
	for i := range want {
		if d := math.Abs(float64(x[i]) - want[i]/sum); d > 1e-6 {
			t.Errorf("Softmax[%d] = %v, want %v", i, x[i], want[i]/sum)
		}
	}
	Softmax(nil) // no panic on empty input

	// Scores 87.5 to 103 below the maximum give subnormal exponentials:
	// they become exact zeros, the rest keeps its exact weights.
	far := []float32{0, -87.5, -95, -103, -1, 0}
	Softmax(far)
	near := math.Exp(-1)
	for i, want := range []float64{1 / (2 + near), 0, 0, 0, near / (2 + near), 1 / (2 + near)} {
		if d := math.Abs(float64(far[i]) - want); d > 1e-6 || (want == 0) != (far[i] == 0) {
			t.Errorf("Softmax of far scores [%d] = %v, want %v", i, far[i], want)
		}
	}

	h := []float32{-3, 0, 0.5, 4}
	g := []float32{2, 2, 2, 2}
	s := slices.Clone(h)
	SiLU(s)
	SwiGLU(h, g)
	for i, v := range []float64{-3, 0, 0.5, 4} {
		silu := v / (1 + math.Exp(-v))
		if math.Abs(float64(s[i])-silu) > 1e-6 || math.Abs(float64(h[i])-2*silu) > 2e-6 {
			t.Errorf("x=%v: SiLU %v SwiGLU %v, want %v and %v", v, s[i], h[i], silu, 2*silu)
		}
	}
}

// TestExpOpsMatchFloat64 checks Softmax, SiLU and SwiGLU (vector exp on
// AVX2 plus the scalar tail) against float64 maths over lengths around the
// 8-wide step and inputs up to +-100, past the vector exp's clamps.
func TestExpOpsMatchFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	silu := func(v float64) float64 { return v / (1 + math.Exp(-v)) }
	for _, n := range []int{1, 7, 8, 9, 16, 33, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			x := scaled(randVec(rng, n), 100)
			x[0] = -100 // far below the clamp
			g := randVec(rng, n)

			sm := slices.Clone(x)
			Softmax(sm)
			maxv := slices.Max(x)
			var sum float64
			for _, v := range x {
				sum += math.Exp(float64(v - maxv))
			}
			for i, v := range x {
				want := math.Exp(float64(v-maxv)) / sum
				if d := math.Abs(float64(sm[i]) - want); d > 1e-6*want+1e-30 {
					t.Errorf("Softmax[%d] of %v = %v, want %v", i, v, sm[i], want)
				}
			}

			s, h := slices.Clone(x), slices.Clone(x)
			SiLU(s)
			SwiGLU(h, g)
			for i, v := range x {
				want := silu(float64(v))
				if d := math.Abs(float64(s[i]) - want); d > 1e-6*math.Abs(want)+1e-30 {
					t.Errorf("SiLU(%v) = %v, want %v", v, s[i], want)
				}
				want *= float64(g[i])
				if d := math.Abs(float64(h[i]) - want); d > 2e-6*math.Abs(want)+1e-30 {
					t.Errorf("SwiGLU(%v, %v) = %v, want %v", v, g[i], h[i], want)
				}
			}
		})
	}
}
