package llama

import (
	"testing"

	"github.com/kiln-ai/kiln/engine/internal/testshared"
	"github.com/kiln-ai/kiln/kernels"
)

// TestQwen35Reference runs every case of golden-qwen35.json (the tiny
// Qwen3.5 in its Hugging Face F32 and BF16 directories and its GGUF) on
// every kernel path: the top-8 logits after the prompt, fed in one step,
// within 1e-4 of the float64 reference, and 16 greedy steps exact up to
// the first step whose reference margin is below twice that.
func TestQwen35Reference(t *testing.T) {
	_, g := testshared.LoadQwen35Golden(t)
	for _, path := range kernels.Paths() {
		pool, err := kernels.NewPoolOpts(2, kernels.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		for _, gc := range g.Cases {
			t.Run(path+"/"+gc.ID, func(t *testing.T) {
				l := openRef(t, gc.File)
				logits, greedy := runRef(l.Model, nil, pool, gc.PromptIDs, len(gc.Greedy))
				checkRef(t, "float64 reference", logits, greedy, &gc.RefOutputs, refTolFloat)
			})
		}
	}
}
