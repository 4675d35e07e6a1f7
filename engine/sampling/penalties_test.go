package sampling

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPenaltiesApply: each adjustment changes a fixed logit vector exactly
// as its definition says, given the prompt and the tokens generated so far.
func TestPenaltiesApply(t *testing.T) {
	base := []float32{2, -1, 0.5, 3, -2}
	inf := float32(math.Inf(-1))
	tests := []struct {
		name      string
		cfg       Params
		prompt    []int
		generated []int // recorded before the logits are adjusted
		want      []float32
	}{
		{"logit_bias adds to the given ids", Params{LogitBias: []LogitBias{{ID: 1, Bias: 100}, {ID: 3, Bias: -0.5}}},
			nil, nil, []float32{2, 99, 0.5, 2.5, -2}},
		{"frequency subtracts count times penalty", Params{FrequencyPenalty: 0.5},
			[]int{0}, []int{3, 3, 1}, []float32{2, -1.5, 0.5, 2, -2}},
		{"presence subtracts once per generated id", Params{PresencePenalty: 0.75},
			[]int{0}, []int{3, 3, 1}, []float32{2, -1.75, 0.5, 2.25, -2}},
		{"negative presence favours repeats", Params{PresencePenalty: -1},
			nil, []int{4}, []float32{2, -1, 0.5, 3, -1}},
		{"repetition divides positive and multiplies negative, prompt included", Params{RepetitionPenalty: 2},
			[]int{0, 1}, []int{3}, []float32{1, -2, 0.5, 1.5, -2}},
		{"repetition 1 is off", Params{RepetitionPenalty: 1, PresencePenalty: 1},
			[]int{0}, nil, base},
		{"min_p drops below the fraction of the top probability", Params{MinP: 0.2},
			nil, nil, []float32{2, inf, inf, 3, inf}}, // e^(2-3)=0.37 >= 0.2; e^(0.5-3)=0.08 < 0.2
		{"min_p 1 keeps only the top", Params{MinP: 1},
			nil, nil, []float32{inf, inf, inf, 3, inf}},
		{"bias, then penalties, then min_p", Params{LogitBias: []LogitBias{{ID: 2, Bias: 3}}, FrequencyPenalty: 1, MinP: 0.2},
			nil, []int{3}, []float32{2, inf, 3.5, 2, inf}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(len(base)); err != nil {
				t.Fatal(err)
			}
			p := &penalties{prompt: tc.prompt}
			p.init(len(base))
			for _, id := range tc.generated {
				p.record(id)
			}
			got := append([]float32(nil), base...)
			p.apply(&tc.cfg, got)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("logits (-want +got):\n%s", d)
			}
		})
	}
}

// TestPenaltiesGreedy: the adjustments apply to greedy decoding too, which
// stays deterministic.
func TestPenaltiesGreedy(t *testing.T) {
	logits := func() []float32 { return []float32{5, 4.9, 0, -3} }
	run := func(cfg Params, prompt []int, n int) []int {
		s := New(cfg)
		s.SetPrompt(prompt)
		out := make([]int, n)
		for i := range out {
			out[i] = s.Sample(logits())
		}
		return out
	}
	tests := []struct {
		name   string
		cfg    Params
		prompt []int
		want   []int
	}{
		{"no penalty repeats the argmax", Params{}, nil, []int{0, 0, 0, 0}},
		{"presence alternates once both were said", Params{PresencePenalty: 0.2}, nil, []int{0, 1, 0, 0}},
		{"frequency alternates", Params{FrequencyPenalty: 0.15}, nil, []int{0, 1, 0, 1}},
		{"repetition counts the prompt", Params{RepetitionPenalty: 1.1}, []int{0}, []int{1, 0, 0, 0}},
		{"logit_bias -100 bans a token", Params{LogitBias: []LogitBias{{ID: 0, Bias: -100}}}, nil, []int{1, 1, 1, 1}},
		{"logit_bias +100 forces a token", Params{LogitBias: []LogitBias{{ID: 3, Bias: 100}}}, nil, []int{3, 3, 3, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := run(tc.cfg, tc.prompt, len(tc.want)), run(tc.cfg, tc.prompt, len(tc.want))
			if d := cmp.Diff(tc.want, a); d != "" {
				t.Errorf("tokens (-want +got):\n%s", d)
			}
			if d := cmp.Diff(a, b); d != "" {
				t.Errorf("greedy not deterministic (-first +second):\n%s", d)
			}
		})
	}
}

// TestPenaltiesSupport: top_k and min_p bound the sampled distribution's
// support, and logit_bias shifts its mass, as defined.
func TestPenaltiesSupport(t *testing.T) {
	logits := []float32{0, 1, 2, 3, 2.5, -1}
	const n = 4000
	freq := func(cfg Params) []int {
		cfg.Temperature, cfg.HasSeed, cfg.Seed = 1, true, 7
		s := New(cfg)
		counts := make([]int, len(logits))
		buf := make([]float32, len(logits))
		for range n {
			copy(buf, logits)
			counts[s.Sample(buf)]++
		}
		return counts
	}
	plain := freq(Params{})
	for id, c := range plain {
		if c == 0 {
			t.Fatalf("unadjusted sampling never drew %d: %v", id, plain)
		}
	}
	onlyIn := func(name string, got []int, allowed ...int) {
		t.Helper()
		ok := map[int]bool{}
		for _, id := range allowed {
			ok[id] = true
			if got[id] == 0 {
				t.Errorf("%s: allowed token %d never drawn: %v", name, id, got)
			}
		}
		for id, c := range got {
			if !ok[id] && c > 0 {
				t.Errorf("%s: token %d drawn %d times, want never: %v", name, id, c, got)
			}
		}
	}
	onlyIn("top_k 2", freq(Params{TopK: 2}), 3, 4)
	// min_p 0.3: kept are logits >= 3 + ln 0.3 = 1.80.
	onlyIn("min_p 0.3", freq(Params{MinP: 0.3}), 2, 3, 4)
	biased := freq(Params{LogitBias: []LogitBias{{ID: 0, Bias: 4}}})
	if biased[0] <= plain[0]*5 {
		t.Errorf("logit_bias +4 on token 0: %d draws, unadjusted %d: want far more", biased[0], plain[0])
	}
}

func TestPenaltiesValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Params
		ok   bool
	}{
		{"zero", Params{}, true},
		{"edges", Params{FrequencyPenalty: -2, PresencePenalty: 2, RepetitionPenalty: 10, MinP: 1, LogitBias: []LogitBias{{ID: 9, Bias: -100}}}, true},
		{"frequency above", Params{FrequencyPenalty: 2.01}, false},
		{"presence below", Params{PresencePenalty: -2.5}, false},
		{"presence NaN", Params{PresencePenalty: float32(math.NaN())}, false},
		{"repetition negative", Params{RepetitionPenalty: -1}, false},
		{"repetition huge", Params{RepetitionPenalty: 11}, false},
		{"min_p above one", Params{MinP: 1.5}, false},
		{"bias id outside the vocabulary", Params{LogitBias: []LogitBias{{ID: 10, Bias: 1}}}, false},
		{"bias id negative", Params{LogitBias: []LogitBias{{ID: -1, Bias: 1}}}, false},
		{"bias too large", Params{LogitBias: []LogitBias{{ID: 1, Bias: 101}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate(10)
			if (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestPenaltiesNoAllocs: after the first token of a request, adjusting and
// sampling allocate nothing.
func TestPenaltiesNoAllocs(t *testing.T) {
	s, src, buf := penalizedSampler(32000)
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		copy(buf, src)
		buf[i%len(buf)] += 20 // a different token each time: the touched set grows
		i += 7
		s.Sample(buf)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per penalized token, want 0", allocs)
	}
}

func penalizedSampler(vocab int) (*Sampler, []float32, []float32) {
	src := make([]float32, vocab)
	for i := range src {
		src[i] = float32(i%97) / 10
	}
	s := New(Params{Temperature: 0.8, TopK: 40, TopP: 0.9, MinP: 0.05, FrequencyPenalty: 0.5,
		PresencePenalty: 0.3, RepetitionPenalty: 1.1, LogitBias: []LogitBias{{ID: 5, Bias: 2}}, HasSeed: true, Seed: 1})
	s.SetPrompt([]int{1, 2, 3, 50, 60})
	buf := make([]float32, vocab)
	copy(buf, src)
	s.Sample(buf) // the first token allocates the request's counts
	return s, src, buf
}

func BenchmarkSamplePenalized(b *testing.B) {
	s, src, buf := penalizedSampler(32000)
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, src)
		s.Sample(buf)
	}
}
