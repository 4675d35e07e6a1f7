package sampling

import (
	stdcmp "cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSamplerGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		cfg    Params
		want   int
	}{
		{"argmax", []float32{0.1, 3, -1, 2.9}, Params{}, 1},
		{"ties take the lowest id", []float32{1, 5, 5, 2}, Params{}, 1},
		{"all equal", []float32{0, 0, 0}, Params{}, 0},
		{"negative", []float32{-3, -2, -5}, Params{}, 1},
		{"top_k 1 is greedy at any temperature", []float32{1, 2, 9, 3}, Params{Temperature: 5, TopK: 1, HasSeed: true}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]float32(nil), tc.logits...)
			if got := New(tc.cfg).Sample(tc.logits); got != tc.want {
				t.Errorf("Sample = %d, want %d", got, tc.want)
			}
			if d := cmp.Diff(before, tc.logits); d != "" {
				t.Errorf("logits modified (-want +got):\n%s", d)
			}
		})
	}
}

// draws samples n tokens with a fresh seeded sampler.
func draws(cfg Params, logits []float32, n int) []int {
	s := New(cfg)
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
	cfg := Params{Temperature: 1, Seed: 42, HasSeed: true}
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
		cfg  Params
		want []float64 // expected frequency per id
	}{
		{"softmax", Params{Temperature: 1}, []float64{1. / 8, 3. / 8, 4. / 8}},
		{"temperature 0.5 squares the odds", Params{Temperature: 0.5}, []float64{1. / 26, 9. / 26, 16. / 26}},
		{"top_k 2", Params{Temperature: 1, TopK: 2}, []float64{0, 3. / 7, 4. / 7}},
		{"top_p 0.6 keeps the two largest", Params{Temperature: 1, TopP: 0.6}, []float64{0, 3. / 7, 4. / 7}},
		{"top_p 0.4 keeps the largest", Params{Temperature: 1, TopP: 0.4}, []float64{0, 0, 1}},
		{"top_p 1 keeps all", Params{Temperature: 1, TopP: 1}, []float64{1. / 8, 3. / 8, 4. / 8}},
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
	for _, cfg := range []Params{{}, {Temperature: 0.8}, {Temperature: 0.8, TopK: 40}, {Temperature: 0.8, TopP: 0.9}, {Temperature: 0.8, TopK: 40, TopP: 0.9}} {
		s := New(cfg)
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
		cfg := Params{Temperature: temp, TopK: k, TopP: p, Seed: seed, HasSeed: true}
		if cfg.Validate(0) != nil || temp > 1e4 || (temp > 0 && temp < 1e-3) {
			return
		}
		id := New(cfg).Sample(logits)
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

// BenchmarkSample: one draw from a 32k vocabulary. The logits are normal
// with a spread of 3 (peaked, as a trained model's often are) or of 0.1
// (flat: a random-weight model, or a high temperature).
func BenchmarkSample(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	peaked, flat := make([]float32, 32000), make([]float32, 32000)
	for i := range peaked {
		peaked[i] = float32(r.NormFloat64() * 3)
		flat[i] = float32(r.NormFloat64() * 0.1)
	}
	for _, bc := range []struct {
		name   string
		cfg    Params
		logits []float32
	}{
		{"greedy", Params{}, peaked},
		{"temperature", Params{Temperature: 0.8}, peaked},
		{"top_k40", Params{Temperature: 0.8, TopK: 40}, peaked},
		{"top_p0.9", Params{Temperature: 0.8, TopP: 0.9}, peaked},
		{"top_p0.9_flat", Params{Temperature: 0.8, TopP: 0.9}, flat},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(bc.cfg)
			b.ReportAllocs()
			for b.Loop() {
				s.Sample(bc.logits)
			}
		})
	}
}

// argmax is the plain scan greedy sampling must agree with: the largest
// value, the lowest index on ties, NaN never winning, 0 with nothing else.
func argmax(x []float32) int {
	best := -1
	for i, v := range x {
		if v == v && (best < 0 || v > x[best]) {
			best = i
		}
	}
	return max(best, 0)
}

// nucleusRef is the nucleus by its definition: the candidates sorted by
// weight (the lower id first on ties), then the shortest prefix whose mass
// reaches p of the whole; it returns that prefix's last id and mass.
func nucleusRef(cand []int32, probs []float32, p float32) (int32, float64) {
	ids := slices.Clone(cand)
	var sum float64
	for _, id := range ids {
		sum += float64(probs[id])
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if probs[a] != probs[b] {
			return stdcmp.Compare(probs[b], probs[a])
		}
		return stdcmp.Compare(a, b)
	})
	target := float64(p) * sum
	var acc float64
	for _, id := range ids {
		acc += float64(probs[id])
		if acc >= target {
			return id, acc
		}
	}
	return ids[len(ids)-1], acc
}

// TestNucleusMatchesSort: the radix select finds the nucleus the sort
// defines, over flat and peaked weights, many ties, every vocabulary
// size up to a real one's, with and without a top-k candidate list.
func TestNucleusMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		n := 1 + r.IntN(40000)
		if trial%2 == 0 {
			n = 1 + r.IntN(100)
		}
		probs := make([]float32, n)
		spread := []float64{0.01, 1, 5}[r.IntN(3)]
		levels := []int{0, 3, 50}[r.IntN(3)] // 0: no forced ties
		for i := range probs {
			x := r.NormFloat64() * spread
			if levels > 0 {
				x = float64(r.IntN(levels)) * spread / float64(levels)
			}
			probs[i] = float32(math.Exp(-math.Abs(x)))
			if r.IntN(20) == 0 {
				probs[i] = 0
			}
		}
		probs[r.IntN(n)] = 1
		var cand []int32
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		if trial%3 == 0 {
			cand = all[:0:0]
			for _, id := range all {
				if r.IntN(2) == 0 {
					cand = append(cand, id)
				}
			}
			if len(cand) == 0 {
				cand = append(cand, int32(r.IntN(n)))
			}
			probs[cand[0]] = 1
		}
		ref := cand
		if ref == nil {
			ref = all
		}
		var sum float64
		for _, id := range ref {
			sum += float64(probs[id])
		}
		p := float32(r.Float64())
		if p == 0 {
			p = 0.5
		}
		s := New(Params{Temperature: 1, TopP: p})
		thr, total, memb := s.nucleus(cand, probs, sum)
		wantID, wantTotal := nucleusRef(ref, probs, p)
		if want := rankKey(probs[wantID], int(wantID)); thr != want {
			t.Fatalf("trial %d (n %d, p %v): threshold key %#x, want %#x (id %d, weight %v)", trial, n, p, thr, want, wantID, probs[wantID])
		}
		if math.Abs(total-wantTotal) > 1e-9*wantTotal {
			t.Fatalf("trial %d: nucleus mass %v, want %v", trial, total, wantTotal)
		}
		// The list the draw walks holds the whole nucleus, in order.
		if !slices.IsSorted(memb) && cand == nil {
			t.Fatalf("trial %d: the nucleus's list is out of id order", trial)
		}
		in := map[int32]bool{}
		for _, id := range memb {
			in[id] = true
		}
		for _, id := range ref {
			if probs[id] > 0 && rankKey(probs[id], int(id)) >= thr && !in[id] {
				t.Fatalf("trial %d: id %d is in the nucleus but not in the list", trial, id)
			}
		}
	}
}

// TestSamplerFlatTopP: a flat distribution with a nucleus cut samples
// only inside the nucleus, and reaches most of it.
func TestSamplerFlatTopP(t *testing.T) {
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(i) / 1000 // weights e^0 .. e^0.999
	}
	s := New(Params{Temperature: 1, TopP: 0.5, Seed: 3, HasSeed: true})
	seen := map[int]bool{}
	for range 5000 {
		id := s.Sample(slices.Clone(logits))
		if id < 620 { // half the mass is ids 620-999
			t.Fatalf("sampled id %d, outside the nucleus", id)
		}
		seen[id] = true
	}
	if len(seen) < 350 {
		t.Errorf("%d distinct ids of the nucleus's 380", len(seen))
	}
}
