package kernels

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzQuantizeQ8 asserts the Q8_0 round-trip bound: every value comes back
// within half a quantization step plus the scale's own half-precision
// rounding (127 quants times half an ulp of the f16 scale), and the block
// layout is ggml's (34 bytes per 32 values, the largest magnitude maps to
// +-127).
func FuzzQuantizeQ8(f *testing.F) {
	f.Add(make([]byte, 64), uint8(10))
	f.Add([]byte{0xff, 0x7f, 0x00, 0x80, 1, 2, 3}, uint8(0))
	f.Add([]byte("a quick brown fox jumps over the lazy dog, twice over"), uint8(20))
	f.Fuzz(func(t *testing.T, data []byte, shift uint8) {
		// Values are int16s scaled by 2^-(shift%40): magnitudes from 2^15
		// (the scale stays a normal half) down to subnormal scales.
		n := (len(data) / 2) / Q8Block * Q8Block
		if n == 0 {
			return
		}
		scale := math.Ldexp(1, -int(shift%40))
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(float64(int16(binary.LittleEndian.Uint16(data[2*i:]))) * scale)
		}
		raw := QuantizeQ8(nil, src)
		if len(raw) != n/Q8Block*Q8BlockBytes {
			t.Fatalf("%d values gave %d bytes", n, len(raw))
		}
		for k := 0; k < n/Q8Block; k++ {
			blk := raw[k*Q8BlockBytes : (k+1)*Q8BlockBytes]
			d := float64(HalfToFloat(binary.LittleEndian.Uint16(blk)))
			var amax float64
			for _, v := range src[k*Q8Block : (k+1)*Q8Block] {
				amax = max(amax, math.Abs(float64(v)))
			}
			exact := amax / 127
			// The f16 rounding of the scale: half an ulp, relative 2^-11 for
			// normal halves, absolute 2^-25 for subnormal ones.
			dErr := max(exact*math.Ldexp(1, -11), math.Ldexp(1, -25))
			if math.Abs(d-exact) > dErr*1.0001 {
				t.Fatalf("block %d: scale %g, want %g within %g", k, d, exact, dErr)
			}
			var qmax int
			for j, q := range blk[2:] {
				v := float64(src[k*Q8Block+j])
				got := d * float64(int8(q))
				bound := exact/2*1.0001 + 127*dErr + 1e-30
				if math.Abs(got-v) > bound {
					t.Fatalf("block %d value %d: %g came back as %g (q %d, d %g), bound %g", k, j, v, got, int8(q), d, bound)
				}
				qmax = max(qmax, int(math.Abs(float64(int8(q)))))
			}
			if amax > 0 && qmax != 127 {
				t.Fatalf("block %d: largest quant %d, want 127", k, qmax)
			}
		}
	})
}
