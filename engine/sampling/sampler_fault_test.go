package sampling

import (
	"math"
	"testing"
)

// TestSamplerNonFinite: no parameters the server accepts and no logits the
// model can produce make Sample panic or pick a token without probability.
// The first case is the probe's engine killer: a temperature that is a
// float32 denormal made 1/T +Inf, every probability NaN, and the nucleus
// empty.
func TestSamplerNonFinite(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name   string
		cfg    Params
		logits []float32
		want   []int // acceptable ids
	}{
		{"denormal temperature with top_p", Params{Temperature: 1e-40, TopP: 0.9}, []float32{1, 3, 2}, []int{1}},
		{"denormal temperature with top_k", Params{Temperature: 1e-40, TopK: 2}, []float32{1, 3, 2}, []int{1}},
		{"smallest normal temperature", Params{Temperature: 1.2e-38, TopP: 0.5}, []float32{1, 3, 2}, []int{1}},
		{"NaN logit first", Params{Temperature: 1, TopP: 0.5}, []float32{nan, 0, 30}, []int{2}},
		{"NaN logits never win greedy", Params{}, []float32{nan, -1, nan}, []int{1}},
		{"all NaN", Params{Temperature: 1, TopP: 0.9}, []float32{nan, nan, nan}, []int{0}},
		{"all NaN with top_k", Params{Temperature: 1, TopK: 2, TopP: 0.9}, []float32{nan, nan, nan}, []int{0, 1, 2}},
		{"all -Inf", Params{Temperature: 0.7, TopP: 0.9}, []float32{-inf, -inf, -inf}, []int{0}},
		{"+Inf logit is certain", Params{Temperature: 1, TopP: 0.9}, []float32{0, 5, inf, 1}, []int{2}},
		{"+Inf and NaN", Params{Temperature: 2}, []float32{nan, inf, inf}, []int{1}},
		{"one logit", Params{Temperature: 1, TopP: 0.5}, []float32{nan}, []int{0}},
		{"tiny top_p", Params{Temperature: 1, TopP: math.SmallestNonzeroFloat32}, []float32{1, 3, 2}, []int{1}},
		{"huge temperature", Params{Temperature: math.MaxFloat32, TopP: 0.9}, []float32{1, 3, 2}, []int{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				tc.cfg.Seed, tc.cfg.HasSeed = seed, true
				logits := append([]float32(nil), tc.logits...)
				got := New(tc.cfg).Sample(logits)
				ok := false
				for _, w := range tc.want {
					ok = ok || got == w
				}
				if !ok {
					t.Fatalf("seed %d: Sample = %d, want one of %v", seed, got, tc.want)
				}
			}
		})
	}
}

// TestSamplerDenormalIsGreedy: a temperature whose reciprocal overflows is
// the greedy limit, reported as such.
func TestSamplerDenormalIsGreedy(t *testing.T) {
	if !New(Params{Temperature: 1e-40}).Greedy() {
		t.Error("temperature 1e-40: Greedy() = false, want true")
	}
	if New(Params{Temperature: 1e-30}).Greedy() {
		t.Error("temperature 1e-30: Greedy() = true, want false (1/T is finite)")
	}
}

// FuzzSampler: any logits and parameters that pass Validate give an id
// inside the vocabulary, without panicking.
func FuzzSampler(f *testing.F) {
	f.Add(float32(1e-40), float32(0.9), 0, uint64(1), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(float32(1), float32(0.5), 2, uint64(2), []byte{0xff, 0xff, 0xc0, 0x7f, 0, 0, 0x80, 0x7f})
	f.Fuzz(func(t *testing.T, temp, topP float32, topK int, seed uint64, raw []byte) {
		cfg := Params{Temperature: temp, TopP: topP, TopK: topK, Seed: seed, HasSeed: true}
		if cfg.Validate(0) != nil || len(raw) < 4 {
			return
		}
		logits := make([]float32, len(raw)/4)
		for i := range logits {
			b := raw[4*i:]
			logits[i] = math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		}
		if got := New(cfg).Sample(logits); got < 0 || got >= len(logits) {
			t.Fatalf("Sample = %d, outside [0, %d)", got, len(logits))
		}
	})
}
