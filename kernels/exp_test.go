package kernels

import (
	"math"
	"testing"
)

// TestExpf sweeps the whole float32 line and checks expf against the
// float64 math.Exp: relative error within 2^-21 where the result is a
// normal float32, exact agreement on the special values.
func TestExpf(t *testing.T) {
	check := func(x float32) {
		got, want := float64(expf(x)), math.Exp(float64(x))
		switch {
		case math.IsNaN(want):
			if !math.IsNaN(got) {
				t.Fatalf("expf(%v) = %v, want NaN", x, got)
			}
		case want > math.MaxFloat32 || want < 0x1p-126:
			if got != float64(float32(want)) {
				t.Fatalf("expf(%v) = %v, want %v", x, got, float32(want))
			}
		default:
			if math.Abs(got-want) > 0x1p-21*want {
				t.Fatalf("expf(%v) = %v, want %v (rel err %g)", x, got, want, math.Abs(got-want)/want)
			}
		}
	}
	for _, x := range []float32{0, -0, 1, -1, 88.37626, 88.3763, 88.73, -87.33654, -87.3366, -103, -104, -200, 200,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-30, -1e-30} {
		check(x)
	}
	// Every 997th float32 bit pattern: both signs, all exponents.
	for b := uint64(0); b < 1<<32; b += 997 {
		check(math.Float32frombits(uint32(b)))
	}
}
