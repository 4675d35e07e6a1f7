package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLargest(t *testing.T) {
	tests := []struct {
		name string
		v    []float32
		k    int
		want [][2]float64
	}{
		{"descending", []float32{1, 5, -2, 3}, 3, [][2]float64{{1, 5}, {3, 3}, {0, 1}}},
		{"ties keep the smaller id first", []float32{2, 7, 7, 2}, 3, [][2]float64{{1, 7}, {2, 7}, {0, 2}}},
		{"k beyond the vocabulary", []float32{0.5, -1}, 5, [][2]float64{{0, 0.5}, {1, -1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, largest(tc.v, tc.k)); d != "" {
				t.Errorf("largest (-want +got):\n%s", d)
			}
		})
	}
}

// TestGenerateTopLogits: --top-logits K adds K [id, logit] pairs, largest
// first, and the first of them is the greedy first token.
func TestGenerateTopLogits(t *testing.T) {
	model := sharedModelPath(t, "stories260K.bin")
	out := generateJSON(t, "--model", model, "--prompt-ids", "1,403,407", "--max-tokens", "1", "--temperature", "0", "--top-logits", "5")
	if len(out.TopLogits) != 5 {
		t.Fatalf("top_logits %v, want 5 pairs", out.TopLogits)
	}
	for i := 1; i < len(out.TopLogits); i++ {
		if out.TopLogits[i][1] > out.TopLogits[i-1][1] {
			t.Errorf("top_logits not descending: %v", out.TopLogits)
		}
	}
	if int(out.TopLogits[0][0]) != out.IDs[0] {
		t.Errorf("largest logit id %v, greedy token %d", out.TopLogits[0][0], out.IDs[0])
	}
}

// TestGenerateContext: --context caps a GGUF model's context, so a long
// generation stops at the cap with finish reason "length".
func TestGenerateContext(t *testing.T) {
	model := sharedModelPath(t, "ref/tiny-qwen2.Q4_K_M.gguf")
	out := generateJSON(t, "--model", model, "--context", "16", "--prompt-ids", "596,1,2", "--max-tokens", "40", "--temperature", "0")
	if out.FinishReason != "length" || out.PromptTokens+out.CompletionTokens != 16 {
		t.Errorf("finish %q after %d+%d tokens, want length at the context of 16", out.FinishReason, out.PromptTokens, out.CompletionTokens)
	}
}
