package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// withSeqLen makes the engine see a context of n tokens, so a test can
// fill it without prefilling the model's whole context.
func withSeqLen(n int) harnessOption { return func(s *harnessSetup) { s.seqLen = n } }

// TestMaxTokensClipped: max_tokens beyond the room the prompt leaves in
// the context is clipped to that room, and the response says so the
// OpenAI way, with no extra field: finish_reason "length" and a usage
// whose prompt and completion tokens add up to the context length.
func TestMaxTokensClipped(t *testing.T) {
	const ctxLen = 48
	h := newHarness(t, withSeqLen(ctxLen))
	bias := map[string]int{}
	for _, id := range h.model.Tokenizer.StopIDs() {
		bias[fmt.Sprint(id)] = -100 // no early stop: only the context ends the completion
	}
	prompt := strings.TrimSpace(strings.Repeat("sun ", 30))
	for _, path := range []string{completionsPath, chatPath} {
		t.Run(path, func(t *testing.T) {
			body := map[string]any{"model": h.model.ID, "max_tokens": 100000, "temperature": 0, "logit_bias": bias}
			if path == chatPath {
				body["messages"] = []map[string]any{{"role": "user", "content": prompt}}
			} else {
				body["prompt"] = prompt
			}
			status, _, raw := h.do(http.MethodPost, path, body, nil)
			var resp struct {
				Choices []struct {
					FinishReason string `json:"finish_reason"`
				}
				Usage struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
				}
			}
			if status != http.StatusOK || json.Unmarshal(raw, &resp) != nil || len(resp.Choices) != 1 {
				t.Fatalf("status %d: %s", status, raw)
			}
			u := resp.Usage
			if resp.Choices[0].FinishReason != "length" || u.PromptTokens+u.CompletionTokens != ctxLen || u.CompletionTokens < 1 {
				t.Errorf("finish %q, usage %d + %d: want \"length\" and prompt + completion = the context (%d)",
					resp.Choices[0].FinishReason, u.PromptTokens, u.CompletionTokens, ctxLen)
			}
		})
	}
}
