package kernels

import (
	"math"
	"testing"
)

// TestHalfRoundTrip checks all 65536 halves: HalfToFloat gives the exact
// value (from the definition of binary16) and FloatToHalf returns the
// same bits for every non-NaN half.
func TestHalfRoundTrip(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := HalfToFloat(h)
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		exp, mant := int(h>>10&0x1f), float64(h&0x3ff)
		var want float64
		switch {
		case exp == 0x1f && mant != 0:
			if !math.IsNaN(float64(f)) {
				t.Fatalf("HalfToFloat(%#04x) = %v, want NaN", h, f)
			}
			if g := FloatToHalf(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("FloatToHalf(NaN from %#04x) = %#04x, not a NaN", h, g)
			}
			continue
		case exp == 0x1f:
			want = math.Inf(int(sign))
		case exp == 0:
			want = sign * math.Ldexp(mant, -24)
		default:
			want = sign * math.Ldexp(1+mant/1024, exp-15)
		}
		if float64(f) != want || math.Signbit(float64(f)) != (sign < 0) {
			t.Fatalf("HalfToFloat(%#04x) = %v, want %v", h, f, want)
		}
		if g := FloatToHalf(f); g != h {
			t.Fatalf("FloatToHalf(HalfToFloat(%#04x)) = %#04x", h, g)
		}
	}
}

// FuzzFloatToHalf asserts round-to-nearest: no other finite half is closer
// to the input than the one chosen, and ties pick the even mantissa.
func FuzzFloatToHalf(f *testing.F) {
	for _, v := range []float32{0, 1, -1, 65504, 65520, 1e-8, 5.9604645e-08, 2.9802322e-08, 0.1, 3.14159} {
		f.Add(math.Float32bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint32) {
		x := math.Float32frombits(bits)
		h := FloatToHalf(x)
		got := HalfToFloat(h)
		if math.IsNaN(float64(x)) {
			if !math.IsNaN(float64(got)) {
				t.Fatalf("FloatToHalf(NaN) = %#04x", h)
			}
			return
		}
		if math.Signbit(float64(got)) != math.Signbit(float64(x)) {
			t.Fatalf("FloatToHalf(%v) = %v: sign lost", x, got)
		}
		ax := math.Abs(float64(x))
		if ax >= 65520 { // rounds to infinity
			if !math.IsInf(float64(got), 0) {
				t.Fatalf("FloatToHalf(%v) = %v, want infinity", x, got)
			}
			return
		}
		mag := h & 0x7fff
		err := math.Abs(math.Abs(float64(got)) - ax)
		for _, n := range []uint16{mag - 1, mag + 1} {
			if n > 0x7bff || (mag == 0 && n == 0xffff) {
				continue
			}
			e := math.Abs(float64(HalfToFloat(n)) - ax)
			if e < err || (e == err && n&1 == 0) {
				t.Fatalf("FloatToHalf(%v) = %#04x (%v), but %#04x (%v) is nearer or the even tie", x, h, got, n, HalfToFloat(n))
			}
		}
	})
}
