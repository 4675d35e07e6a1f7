package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/kernels"
)

// TestQwen35ReferenceEngine: every golden-qwen35.json prompt of each
// layout (HF F32, HF BF16, GGUF), submitted together through the engine
// (continuous batching, prompts prefilled in chunks of 16 across cycles,
// the recurrent state of each slot beside its KV), gives the float64
// reference's greedy ids up to the first step whose reference margin is
// below 2e-4 (the README's rule).
func TestQwen35ReferenceEngine(t *testing.T) {
	dir, g := testshared.LoadQwen35Golden(t)
	pool := kernels.NewPool(2)
	defer pool.Close()
	byFile := map[string][]testshared.RefCase{}
	for _, c := range g.Cases {
		byFile[c.File] = append(byFile[c.File], c)
	}
	for file, cases := range byFile {
		t.Run(file, func(t *testing.T) {
			model, err := llama.Open(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = model.Close() }()
			reqs := make([]engine.Request, len(cases))
			for i, c := range cases {
				reqs[i] = engine.Request{Prompt: c.PromptIDs, MaxTokens: len(c.Greedy)}
			}
			got := runConcurrent(t, model.Model.NewState(4, pool), engine.Config{PrefillChunk: 16}, reqs, true)
			for i, c := range cases {
				for k, id := range c.Greedy {
					if c.GreedyMargin[k] < 2e-4 {
						break
					}
					if k >= len(got[i]) || got[i][k] != id {
						t.Errorf("%s: greedy %v, want %v (step %d)", c.ID, got[i], c.Greedy, k)
						break
					}
				}
			}
		})
	}
}

// TestBatchingInvisibleQwen35: on the tiny Qwen3.5, greedy and seeded
// outputs of up to 6 concurrent requests equal each request run alone
// with the same prefill chunk.
func TestBatchingInvisibleQwen35(t *testing.T) {
	dir := filepath.Dir(testshared.Require(t, "models", "ref", "tiny-qwen35.F32.gguf"))
	model, err := llama.Open(filepath.Join(dir, "tiny-qwen35.F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = model.Close() }()
	m := model.Model
	pool := kernels.NewPool(2)
	defer pool.Close()
	ps := prompts(6, m.Config.Vocab)
	cfg := engine.Config{PrefillChunk: 8}
	for _, sampling := range []sampling.Params{{}, {Temperature: 1, TopP: 0.95, Seed: 3, HasSeed: true}} {
		reqs := make([]engine.Request, len(ps))
		want := make([][]int, len(ps))
		for i, p := range ps {
			reqs[i] = engine.Request{Prompt: p, MaxTokens: 16, Sampling: sampling}
			want[i] = runConcurrent(t, m.NewState(1, pool), cfg, reqs[i:i+1], false)[0]
		}
		for _, stagger := range []bool{false, true} {
			t.Run(fmt.Sprintf("temp%v/stagger=%v", sampling.Temperature, stagger), func(t *testing.T) {
				got := runConcurrent(t, m.NewState(6, pool), cfg, reqs, stagger)
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("batched outputs differ from alone (-want +got):\n%s", d)
				}
			})
		}
	}
}
