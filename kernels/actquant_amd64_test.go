//go:build amd64 && !purego

package kernels

import (
	"encoding/binary"
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
	cases := quantCases(rng, Q8Block, []float32{1, 1e-3, 1e3, 1e-6, 3e-5, 1e30})
	ties := make([]float32, Q8Block)
	for i := range ties {
		ties[i] = float32(i) - 15.5 // |x|*127/15.5 lands on halves for some i
	}
	cases = append(cases, ties)
	for i, x := range cases {
		checkQuantizeQ8ActAVX(t, i, x)
	}
}

// quantCases are rows of blocks of block values for the quantizer tests:
// random rows at each scale, a zero block before one with a single value,
// and a block of the largest float32s of both signs and zeros.
func quantCases(rng *rand.Rand, block int, scales []float32) [][]float32 {
	var cases [][]float32
	for _, scale := range scales {
		x := randVec(rng, max(3*block, 256))
		for i := range x {
			x[i] *= scale
		}
		cases = append(cases, x)
	}
	zero := make([]float32, 2*block)
	zero[block+5] = -2
	big := make([]float32, block)
	for i := range big {
		big[i] = math.MaxFloat32 * float32(i%3-1)
	}
	return append(cases, zero, big)
}

func checkQuantizeQ8ActAVX(t *testing.T, c int, x []float32) {
	t.Helper()
	checkQuantizer(t, c, x, Q8Block, quantizeQ8Act, quantizeQ8ActArch, q8Act{sum: 12345})
}

// checkQuantizer checks that arch, an assembly quantizer of blocks of
// block values, gives goForm's blocks bit for bit and writes nothing past
// them (a marker block after the last must stay as it was).
func checkQuantizer[B comparable](t *testing.T, c int, x []float32, block int, goForm func([]B, []float32), arch func([]B, []float32) bool, marker B) {
	t.Helper()
	n := len(x) / block
	want := make([]B, n)
	goForm(want, x)
	got := make([]B, n+1)
	got[n] = marker
	if !arch(got[:n], x) {
		t.Fatal("the assembly quantizer declined on a CPU it is built for")
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("case %d block %d: assembly %+v, Go %+v", c, k, got[k], want[k])
		}
	}
	if got[n] != marker {
		t.Fatalf("case %d: the assembly wrote past its %d blocks", c, n)
	}
}

// fuzzFloats reads b as little-endian float32s, whole blocks of block
// values, NaNs (and, unless inf, infinities) replaced by 0.
func fuzzFloats(b []byte, block int, inf bool) []float32 {
	x := make([]float32, len(b)/(4*block)*block)
	for i := range x {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(v)) || (!inf && math.IsInf(float64(v), 0)) {
			v = 0
		}
		x[i] = v
	}
	return x
}

// FuzzQuantizeQ8ActAVX compares the two quantizers on arbitrary finite
// float32 blocks.
func FuzzQuantizeQ8ActAVX(f *testing.F) {
	if !haveAVX2 {
		f.Skip("this CPU has no AVX2")
	}
	f.Add(make([]byte, 4*Q8Block))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkQuantizeQ8ActAVX(t, 0, fuzzFloats(b, Q8Block, false))
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
	cases := quantCases(rng, QK_K, []float32{1, 1e-3, 1e3, 1e-6, 3e-5, 1e30, 1e-38})
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
	for i, x := range cases {
		checkQuantizeQ8KActAVX512(t, i, x)
	}
}

func checkQuantizeQ8KActAVX512(t *testing.T, c int, x []float32) {
	t.Helper()
	checkQuantizer(t, c, x, QK_K, quantizeQ8KAct, quantizeQ8KActArch, q8KAct{d: 12345})
}

// FuzzQuantizeQ8KActAVX512 compares the two quantizers on arbitrary
// float32 blocks without NaNs (infinities included).
func FuzzQuantizeQ8KActAVX512(f *testing.F) {
	if !haveAVX512 {
		f.Skip("this CPU has no AVX-512 VNNI")
	}
	f.Add(make([]byte, 4*QK_K))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkQuantizeQ8KActAVX512(t, 0, fuzzFloats(b, QK_K, true))
	})
}
