package llama

import (
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/internal/testshared"
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
			if testshared.Race && !strings.HasSuffix(gc.ID, "/p9") {
				continue // one prompt per layout under the race detector; scripts/test sweeps all without it
			}
			t.Run(path+"/"+gc.ID, func(t *testing.T) {
				l := openRef(t, gc.File)
				logits, greedy := runRef(l.Model, nil, pool, gc.PromptIDs, len(gc.Greedy))
				checkRef(t, "float64 reference", logits, greedy, &gc.RefOutputs, refTolFloat)
			})
		}
	}
}

// allLogits feeds tokens to slot of s in the given pieces (their lengths,
// summing to len(tokens)) and returns the logits after every position.
func allLogits(s *State, slot int, tokens []int, pieces []int) [][]float32 {
	out := make([][]float32, len(tokens))
	pos := 0
	for _, n := range pieces {
		rows := make([]Row, n)
		bufs := make([][]float32, n)
		for j := range rows {
			rows[j] = Row{Slot: slot, Pos: pos + j, Token: tokens[pos+j], Logits: true}
			bufs[j] = make([]float32, s.VocabSize())
		}
		s.Forward(rows, bufs)
		copy(out[pos:], bufs)
		pos += n
	}
	return out
}

// chunks splits n into pieces of size c (the last shorter).
func chunks(n, c int) []int {
	var p []int
	for ; n > 0; n -= c {
		p = append(p, min(c, n))
	}
	return p
}

// TestQwen35PrefillPieces: the tiny Qwen3.5's p100 prompt (which crosses
// the chunked form's 64-position boundary) gives the same logits at every
// position whether it is prefilled in one step (the chunked delta rule),
// token by token (the recurrent one), in chunks of 7, 16 or 64, or in the
// README's pieces 5+1+34+1+59, within the reference's float32 advice; a
// split at a multiple of 64 gives the same bits as one pass; and a slot
// released and used again starts from a clean state.
func TestQwen35PrefillPieces(t *testing.T) {
	_, g := testshared.LoadQwen35Golden(t)
	var prompt []int
	for _, gc := range g.Cases {
		if gc.ID == "tiny-qwen35.hf/p100" {
			prompt = gc.PromptIDs
		}
	}
	if len(prompt) != 100 {
		t.Fatalf("golden-qwen35.json has no 100-token case p100")
	}
	m := openRef(t, "tiny-qwen35.hf").Model
	pool := kernels.NewPool(2)
	defer pool.Close()
	s := m.NewState(2, pool)
	want := allLogits(s, 0, prompt, []int{len(prompt)})
	for name, pieces := range map[string][]int{
		"recurrent": chunks(100, 1), "chunks of 7": chunks(100, 7), "chunks of 16": chunks(100, 16),
		"chunks of 64": chunks(100, 64), "5+1+34+1+59": {5, 1, 34, 1, 59},
	} {
		s.Release(1)
		got := allLogits(s, 1, prompt, pieces)
		worst := 0.0
		for i := range got {
			worst = max(worst, maxDiff(want[i], got[i]))
		}
		if worst > 1e-4 {
			t.Errorf("%s: logits differ from one pass by up to %.2g, want within 1e-4", name, worst)
		}
		if name == "chunks of 64" && worst != 0 {
			t.Errorf("a split at position 64 changed the bits (by up to %.2g): chunks begin at multiples of 64", worst)
		}
		t.Logf("%s: max |diff| over all positions %.2g", name, worst)
	}
}
