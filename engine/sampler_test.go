package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSamplerGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		cfg    Sampling
		want   int
	}{
		{"argmax", []float32{0.1, 3, -1, 2.9}, Sampling{}, 1},
		{"ties take the lowest id", []float32{1, 5, 5, 2}, Sampling{}, 1},
		{"all equal", []float32{0, 0, 0}, Sampling{}, 0},
		{"negative", []float32{-3, -2, -5}, Sampling{}, 1},
		{"top_k 1 is greedy at any temperature", []float32{1, 2, 9, 3}, Sampling{Temperature: 5, TopK: 1, HasSeed: true}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]float32(nil), tc.logits...)
			if got := NewSampler(tc.cfg).Sample(tc.logits); got != tc.want {
				t.Errorf("Sample = %d, want %d", got, tc.want)
			}
			if d := cmp.Diff(before, tc.logits); d != "" {
				t.Errorf("logits modified (-want +got):\n%s", d)
			}
		})
	}
}

// draws samples n tokens with a fresh seeded sampler.
func draws(cfg Sampling, logits []float32, n int) []int {
	s := NewSampler(cfg)
	out := make([]int, n)
	for i := range out {
		out[i] = s.Sample(logits)
	}
	return out
}

func TestSamplerSeedReproducible(t *testing.T) {
	logits := make([]float32, 100)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range logits {
		logits[i] = float32(r.NormFloat64())
	}
	cfg := Sampling{Temperature: 1, Seed: 42, HasSeed: true}
	a, b := draws(cfg, logits, 200), draws(cfg, logits, 200)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("same seed, different draws (-first +second):\n%s", d)
	}
	cfg.Seed = 43
	if c := draws(cfg, logits, 200); cmp.Equal(a, c) {
		t.Error("seeds 42 and 43 gave identical draws")
	}
}

// TestSamplerDistribution: at temperature 1 the draws follow the softmax;
// the temperature sharpens it; top-k and top-p never leave their set. The
// seed is fixed, so the counts are deterministic.
func TestSamplerDistribution(t *testing.T) {
	const n = 20000
	// Probabilities 1/8, 3/8, 4/8 at temperature 1.
	logits := []float32{0, float32(math.Log(3)), float32(math.Log(4))}
	tests := []struct {
		name string
		cfg  Sampling
		want []float64 // expected frequency per id
	}{
		{"softmax", Sampling{Temperature: 1}, []float64{1. / 8, 3. / 8, 4. / 8}},
		{"temperature 0.5 squares the odds", Sampling{Temperature: 0.5}, []float64{1. / 26, 9. / 26, 16. / 26}},
		{"top_k 2", Sampling{Temperature: 1, TopK: 2}, []float64{0, 3. / 7, 4. / 7}},
		{"top_p 0.6 keeps the two largest", Sampling{Temperature: 1, TopP: 0.6}, []float64{0, 3. / 7, 4. / 7}},
		{"top_p 0.4 keeps the largest", Sampling{Temperature: 1, TopP: 0.4}, []float64{0, 0, 1}},
		{"top_p 1 keeps all", Sampling{Temperature: 1, TopP: 1}, []float64{1. / 8, 3. / 8, 4. / 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Seed, tc.cfg.HasSeed = 1, true
			counts := make([]float64, len(logits))
			for _, id := range draws(tc.cfg, logits, n) {
				counts[id]++
			}
			for id, want := range tc.want {
				got := counts[id] / n
				if math.Abs(got-want) > 0.015 || (want == 0) != (got == 0) {
					t.Errorf("id %d: frequency %.4f, want %.4f", id, got, want)
				}
			}
		})
	}
}

func TestTopK(t *testing.T) {
	logits := []float32{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}
	tests := []struct {
		k    int
		want []int32
	}{
		{1, []int32{5}},
		{3, []int32{4, 5, 7}}, // 5 is at ids 4 and 8: the lower id wins
		{4, []int32{4, 5, 7, 8}},
		{5, []int32{2, 4, 5, 7, 8}},
	}
	for _, tc := range tests {
		got := topK(make([]int32, 0, len(logits)), logits, tc.k)
		sortInt32(got)
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("topK(%d) (-want +got):\n%s", tc.k, d)
		}
	}
}

func sortInt32(s []int32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestSamplerNoAllocs(t *testing.T) {
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(i%97) / 10
	}
	for _, cfg := range []Sampling{{}, {Temperature: 0.8}, {Temperature: 0.8, TopK: 40}, {Temperature: 0.8, TopP: 0.9}, {Temperature: 0.8, TopK: 40, TopP: 0.9}} {
		s := NewSampler(cfg)
		s.Sample(logits) // sizes the buffers
		if n := testing.AllocsPerRun(20, func() { s.Sample(logits) }); n != 0 {
			t.Errorf("%+v: %v allocations per sample", cfg, n)
		}
	}
}

// FuzzSample: whatever the logits and parameters, a valid configuration
// returns an id in range; with top-k the id is among the k largest; greedy
// returns the first maximum.
func FuzzSample(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 7}, float32(0.7), 2, float32(0.9), uint64(1))
	f.Add([]byte{0}, float32(0), 0, float32(0), uint64(0))
	f.Add([]byte{9, 9, 9}, float32(100), 0, float32(0.01), uint64(3))
	f.Fuzz(func(t *testing.T, raw []byte, temp float32, k int, p float32, seed uint64) {
		if len(raw) == 0 {
			return
		}
		logits := make([]float32, len(raw))
		for i, b := range raw {
			logits[i] = float32(b)/16 - 8
		}
		cfg := Sampling{Temperature: temp, TopK: k, TopP: p, Seed: seed, HasSeed: true}
		if cfg.validate() != nil || temp > 1e4 || (temp > 0 && temp < 1e-3) {
			return
		}
		id := NewSampler(cfg).Sample(logits)
		if id < 0 || id >= len(logits) {
			t.Fatalf("id %d outside [0, %d)", id, len(logits))
		}
		if temp == 0 && id != argmax(logits) {
			t.Fatalf("greedy gave %d, argmax is %d", id, argmax(logits))
		}
		if k > 0 {
			above := 0
			for _, v := range logits {
				if v > logits[id] {
					above++
				}
			}
			if above >= k {
				t.Fatalf("id %d has %d larger logits, top_k %d", id, above, k)
			}
		}
	})
}

func BenchmarkSample(b *testing.B) {
	logits := make([]float32, 32000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	for _, bc := range []struct {
		name string
		cfg  Sampling
	}{
		{"greedy", Sampling{}},
		{"temperature", Sampling{Temperature: 0.8}},
		{"top_k40", Sampling{Temperature: 0.8, TopK: 40}},
		{"top_p0.9", Sampling{Temperature: 0.8, TopP: 0.9}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := NewSampler(bc.cfg)
			b.ReportAllocs()
			for b.Loop() {
				s.Sample(logits)
			}
		})
	}
}

func TestExpNeg(t *testing.T) {
	for x := float32(-90); x <= 0; x += 0.001 {
		got, want := float64(expNeg(x)), math.Exp(float64(x))
		if x < -87 {
			if got != 0 {
				t.Fatalf("expNeg(%v) = %v, want 0 below -87", x, got)
			}
			continue
		}
		if rel := math.Abs(got-want) / want; rel > 5e-7 {
			t.Fatalf("expNeg(%v) = %v, want %v (relative error %.2g)", x, got, want, rel)
		}
	}
	if got := expNeg(0); got != 1 {
		t.Errorf("expNeg(0) = %v, want 1", got)
	}
}
