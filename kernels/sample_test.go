package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// argMaxRef is the plain scan ArgMax must agree with.
func argMaxRef(x []float32) int {
	best := -1
	for i, v := range x {
		if v == v && (best < 0 || v > x[best]) {
			best = i
		}
	}
	return max(best, 0)
}

func TestArgMax(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		name string
		x    []float32
		want int
	}{
		{"empty", nil, 0},
		{"one", []float32{3}, 0},
		{"all NaN", []float32{nan, nan, nan}, 0},
		{"NaN first", []float32{nan, 1, 2}, 2},
		{"all -Inf", []float32{-inf, -inf}, 0},
		{"-Inf after NaN", []float32{nan, -inf, -inf}, 1},
		{"+Inf", []float32{1, inf, 2, inf}, 1},
		{"tie is lowest", []float32{5, 7, 7, 1}, 1},
		{"zeros of both signs", []float32{float32(math.Copysign(0, -1)), 0}, 0},
	}
	for _, tc := range cases {
		if got := ArgMax(tc.x); got != tc.want {
			t.Errorf("%s: ArgMax(%v) = %d, want %d", tc.name, tc.x, got, tc.want)
		}
	}
	// Every length around the vector widths, with the maximum, NaNs and ties
	// in every place.
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 200; n++ {
		for range 20 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.IntN(9)) - 4 // many ties
				if r.IntN(10) == 0 {
					x[i] = nan
				}
			}
			if got, want := ArgMax(x), argMaxRef(x); got != want {
				t.Fatalf("n %d: ArgMax(%v) = %d, want %d", n, x, got, want)
			}
		}
	}
}

func TestNotBelow(t *testing.T) {
	nan := float32(math.NaN())
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 100; n++ {
		for range 30 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.IntN(20))
				if r.IntN(40) == 0 {
					x[i] = nan
				}
			}
			v := float32(r.IntN(25))
			want := n
			for i, w := range x {
				if !(w < v) {
					want = i
					break
				}
			}
			if got := NotBelow(x, v); got != want {
				t.Fatalf("NotBelow(%v, %v) = %d, want %d", x, v, got, want)
			}
		}
	}
}

func TestExpScaleSum(t *testing.T) {
	nan := float32(math.NaN())
	r := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 100; n++ {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 20)
		}
		x[r.IntN(n)] = nan
		x[r.IntN(n)] = float32(math.Inf(-1))
		sub, scale := float32(60), float32(1.3)
		dst := make([]float32, n)
		sum := ExpScaleSum(dst, x, sub, scale)
		var want float64
		for i, v := range x {
			d := (v - sub) * scale // rounded to float32 as the kernels do
			e := 0.0
			if d >= -87 {
				e = math.Exp(float64(d))
			}
			if math.Abs(float64(dst[i])-e) > 4e-7*e {
				t.Fatalf("n %d: e^((%v-%v)*%v) = %v, want %v", n, v, sub, scale, dst[i], e)
			}
			want += float64(dst[i])
		}
		if math.Abs(sum-want) > 1e-12*want {
			t.Fatalf("n %d: sum %v, want %v", n, sum, want)
		}
	}
	// In place.
	x := []float32{0, -1, -2, -3, -4, -5, -6, -7, -8, -100}
	ExpScaleSum(x, x, 0, 1)
	if x[0] != 1 && math.Abs(float64(x[0])-1) > 2e-7 || x[9] != 0 {
		t.Fatalf("in place: %v", x)
	}
}

func FuzzArgMax(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f, 0, 0, 0xc0, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		x := make([]float32, len(b)/4)
		for i := range x {
			x[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
		}
		if got, want := ArgMax(x), argMaxRef(x); got != want {
			t.Fatalf("ArgMax(%v) = %d, want %d", x, got, want)
		}
	})
}

func BenchmarkArgMax(b *testing.B) {
	x := make([]float32, 32000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			ArgMax(x)
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			argMaxRef(x)
		}
	})
}

func BenchmarkExpScaleSum(b *testing.B) {
	x := make([]float32, 32000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	dst := make([]float32, len(x))
	for b.Loop() {
		ExpScaleSum(dst, x, 12, 1.25)
	}
}
