//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeQ8ActAVX checks that the assembly quantizer gives the Go
// one's blocks bit for bit: random rows at several magnitudes, a zero
// block, blocks with one value (ties at .5 after scaling), halves of the
// scale near binary16's subnormal range, and the largest float32s.
func TestQuantizeQ8ActAVX(t *testing.T) {
	if !haveAVX2 {
		t.Skip("this CPU has no AVX2: the assembly quantizer is not used here")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	var cases [][]float32
	for _, scale := range []float32{1, 1e-3, 1e3, 1e-6, 3e-5, 1e30} {
		x := randVec(rng, 8*Q8Block)
		for i := range x {
			x[i] *= scale
		}
		cases = append(cases, x)
	}
	zero := make([]float32, 2*Q8Block)
	zero[Q8Block+5] = -2
	cases = append(cases, zero)
	ties := make([]float32, Q8Block)
	for i := range ties {
		ties[i] = float32(i) - 15.5 // |x|*127/15.5 lands on halves for some i
	}
	cases = append(cases, ties)
	big := make([]float32, Q8Block)
	for i := range big {
		big[i] = math.MaxFloat32 * float32(i%3-1)
	}
	cases = append(cases, big)
	for i, x := range cases {
		checkQuantizeQ8ActAVX(t, i, x)
	}
}

func checkQuantizeQ8ActAVX(t *testing.T, c int, x []float32) {
	t.Helper()
	n := len(x) / Q8Block
	want := make([]q8Act, n)
	quantizeQ8Act(want, x)
	got := make([]q8Act, n+1)
	got[n].sum = 12345 // a canary past the end
	if !quantizeQ8ActArch(got[:n], x) {
		t.Fatal("quantizeQ8ActArch declined on an AVX2 machine")
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("case %d block %d: assembly %+v, Go %+v", c, k, got[k], want[k])
		}
	}
	if got[n].sum != 12345 {
		t.Fatalf("case %d: the assembly wrote past its %d blocks", c, n)
	}
}

// FuzzQuantizeQ8ActAVX compares the two quantizers on arbitrary finite
// float32 blocks.
func FuzzQuantizeQ8ActAVX(f *testing.F) {
	if !haveAVX2 {
		f.Skip("this CPU has no AVX2")
	}
	f.Add(make([]byte, 4*Q8Block))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := len(b) / (4 * Q8Block) * Q8Block
		x := make([]float32, n)
		for i := range x {
			v := math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				v = 0
			}
			x[i] = v
		}
		checkQuantizeQ8ActAVX(t, 0, x)
	})
}

// TestQuantizeQ8KActAVX512 checks that the AVX-512 quantizer of the
// K-quants' activations gives the Go one's blocks bit for bit: random
// rows at several magnitudes, a zero block, ties of magnitude between a
// positive and a negative value (the first one sets d's sign), values
// that land on halves after scaling, and the largest float32s.
func TestQuantizeQ8KActAVX512(t *testing.T) {
	if !haveAVX512 {
		t.Skip("this CPU has no AVX-512 VNNI: the Go quantizer runs here")
	}
	rng := rand.New(rand.NewPCG(19, 20))
	var cases [][]float32
	for _, scale := range []float32{1, 1e-3, 1e3, 1e-6, 3e-5, 1e30, 1e-38} {
		x := randVec(rng, 3*QK_K)
		for i := range x {
			x[i] *= scale
		}
		cases = append(cases, x)
	}
	zero := make([]float32, 2*QK_K)
	zero[QK_K+200] = -2
	cases = append(cases, zero)
	for _, first := range []float32{-3, 3} {
		tie := randVec(rng, QK_K)
		tie[17], tie[250] = first, -first
		cases = append(cases, tie)
	}
	halves := make([]float32, QK_K)
	for i := range halves {
		halves[i] = float32(i%64) - 31.75
	}
	cases = append(cases, halves)
	big := make([]float32, QK_K)
	for i := range big {
		big[i] = math.MaxFloat32 * float32(i%3-1)
	}
	cases = append(cases, big)
	for i, x := range cases {
		checkQuantizeQ8KActAVX512(t, i, x)
	}
}

func checkQuantizeQ8KActAVX512(t *testing.T, c int, x []float32) {
	t.Helper()
	n := len(x) / QK_K
	want := make([]q8KAct, n)
	quantizeQ8KAct(want, x)
	got := make([]q8KAct, n+1)
	got[n].d = 12345 // a canary past the end
	if !quantizeQ8KActArch(got[:n], x) {
		t.Fatal("quantizeQ8KActArch declined on an AVX-512 machine")
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("case %d block %d: assembly %+v, Go %+v", c, k, got[k], want[k])
		}
	}
	if got[n].d != 12345 {
		t.Fatalf("case %d: the assembly wrote past its %d blocks", c, n)
	}
}

// FuzzQuantizeQ8KActAVX512 compares the two quantizers on arbitrary
// float32 blocks without NaNs (infinities included).
func FuzzQuantizeQ8KActAVX512(f *testing.F) {
	if !haveAVX512 {
		f.Skip("this CPU has no AVX-512 VNNI")
	}
	f.Add(make([]byte, 4*QK_K))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := len(b) / (4 * QK_K) * QK_K
		x := make([]float32, n)
		for i := range x {
			v := math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
			if math.IsNaN(float64(v)) {
				v = 0
			}
			x[i] = v
		}
		checkQuantizeQ8KActAVX512(t, 0, x)
	})
}
