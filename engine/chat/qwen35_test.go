package chat

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRenderQwen35 renders Qwen3.5's template (testdata/qwen3.5.jinja):
// thinking on by default and with enable_thinking true (the prompt opens
// <think>), an empty think block with enable_thinking false, the
// reasoning of an assistant turn before the last user message dropped and
// kept after it, and consecutive tool messages joined into one user turn
// (loop.previtem, loop.nextitem). The expected strings are what Python's
// jinja2 3.1.6 renders with transformers' settings (trim_blocks,
// lstrip_blocks, a sandboxed environment).
func TestRenderQwen35(t *testing.T) {
	tmpl := load(t, "qwen3.5.jinja")
	system := []Message{{Role: "system", Content: "You are a pirate."}}
	history := []Message{
		{Role: "user", Content: "Hello!"},
		{Role: "assistant", Content: "<think>\nGreet back.\n</think>\n\nArr, ahoy."},
		{Role: "user", Content: "Where is the treasure?"},
	}
	toolTurn := []Message{
		{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", Content: "<think>\nAsk the tool.\n</think>\n\nChecking."},
		{Role: "tool", Content: `{"temp": 21}`},
		{Role: "tool", Content: "sunny"},
	}
	const turns = "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nArr, ahoy.<|im_end|>\n<|im_start|>user\nWhere is the treasure?<|im_end|>\n"
	const toolTurns = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n<think>\nAsk the tool.\n</think>\n\nChecking.<|im_end|>\n" +
		"<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response>\n<tool_response>\nsunny\n</tool_response><|im_end|>\n"
	const pirate = "<|im_start|>system\nYou are a pirate.<|im_end|>\n"
	tests := []struct {
		name string
		msgs []Message
		opt  Options
		want string
	}{
		{"thinking", append(system, history...), Options{AddGenerationPrompt: true, Kwargs: map[string]any{"enable_thinking": true}},
			pirate + turns + "<|im_start|>assistant\n<think>\n"},
		{"no thinking", append(system, history...), Options{AddGenerationPrompt: true, Kwargs: map[string]any{"enable_thinking": false}},
			pirate + turns + "<|im_start|>assistant\n<think>\n\n</think>\n\n"},
		{"thinking by default", history, Options{AddGenerationPrompt: true},
			turns + "<|im_start|>assistant\n<think>\n"},
		{"tool turn", append(system, toolTurn...), Options{AddGenerationPrompt: true, Kwargs: map[string]any{"enable_thinking": true}},
			pirate + toolTurns + "<|im_start|>assistant\n<think>\n"},
		{"tool turn without generation prompt", toolTurn, Options{}, toolTurns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tmpl.Render(tt.msgs, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderQwen35Rejects checks the conversations Qwen3.5's template
// refuses: a system message after the first, and no user message.
func TestRenderQwen35Rejects(t *testing.T) {
	tmpl := load(t, "qwen3.5.jinja")
	for name, msgs := range map[string][]Message{
		"late system": {{Role: "user", Content: "hi"}, {Role: "system", Content: "late"}},
		"no user":     {{Role: "system", Content: "s"}, {Role: "assistant", Content: "a"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true})
			if !errors.Is(err, ErrRejected) {
				t.Errorf("Render error %v, want ErrRejected", err)
			}
		})
	}
}
