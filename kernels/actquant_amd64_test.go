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

// q8KArchPaths are the kernel paths whose assembly quantizer of the
// K-quants' activations this CPU runs: avx2 (the AVX2 form, which avxvnni
// shares) and avx512 (the AVX-512 form, which amx shares).
func q8KArchPaths() []kpath {
	var ps []kpath
	for _, p := range []kpath{pathAVX2, pathAVX512} {
		if p.runs() {
			ps = append(ps, p)
		}
	}
	return ps
}

// TestQuantizeQ8KActArch checks that each assembly quantizer of the
// K-quants' activations gives the Go one's blocks bit for bit: random
// rows at several magnitudes, every block count up to five with zero
// blocks among them, a zero block, ties of magnitude between a positive
// and a negative value (the first one sets d's sign), values that land on
// halves after scaling, values so small that -127/m overflows, infinities
// (iscale 0, so NaN products), and the largest float32s.
func TestQuantizeQ8KActArch(t *testing.T) {
	paths := q8KArchPaths()
	if len(paths) == 0 {
		t.Skip("this CPU has no AVX2: the Go quantizer runs here")
	}
	rng := rand.New(rand.NewPCG(19, 20))
	cases := quantCases(rng, QK_K, []float32{1, 1e-3, 1e3, 1e-6, 3e-5, 1e30, 1e-38, 1e-44})
	for n := 1; n <= 5; n++ {
		x := randVec(rng, n*QK_K)
		for k := range n {
			scale := float32(math.Pow(10, float64(rng.IntN(60)-30)))
			for j := range QK_K {
				x[k*QK_K+j] *= scale
			}
			if k%3 == 1 {
				clear(x[k*QK_K : (k+1)*QK_K])
			}
		}
		cases = append(cases, x)
	}
	for _, first := range []float32{-3, 3} {
		for _, at := range [][2]int{{17, 250}, {0, 255}, {8, 9}, {200, 201}} {
			tie := randVec(rng, QK_K)
			tie[at[0]], tie[at[1]] = first, -first
			cases = append(cases, tie)
		}
	}
	halves := make([]float32, QK_K)
	for i := range halves {
		halves[i] = float32(i%64) - 31.75
	}
	cases = append(cases, halves)
	inf := randVec(rng, QK_K)
	inf[40], inf[41], inf[99] = float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.Inf(1))
	cases = append(cases, inf)
	for _, kp := range paths {
		t.Run(kp.String(), func(t *testing.T) {
			for i, x := range cases {
				checkQuantizeQ8KActArch(t, kp, i, x)
			}
		})
	}
}

func checkQuantizeQ8KActArch(t *testing.T, kp kpath, c int, x []float32) {
	t.Helper()
	arch := func(dst []q8KAct, x []float32) bool { return quantizeQ8KActArch(kp, dst, x) }
	checkQuantizer(t, c, x, QK_K, quantizeQ8KAct, arch, q8KAct{d: 12345})
}

// FuzzQuantizeQ8KActArch compares the Go quantizer with each assembly one
// on arbitrary float32 blocks without NaNs (infinities included).
func FuzzQuantizeQ8KActArch(f *testing.F) {
	paths := q8KArchPaths()
	if len(paths) == 0 {
		f.Skip("this CPU has no AVX2")
	}
	f.Add(make([]byte, 4*QK_K))
	f.Fuzz(func(t *testing.T, b []byte) {
		x := fuzzFloats(b, QK_K, true)
		for _, kp := range paths {
			checkQuantizeQ8KActArch(t, kp, 0, x)
		}
	})
}
