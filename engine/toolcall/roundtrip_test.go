package toolcall_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/toolcall"
)

// TestRoundTrip: the calls a model's chat template writes into an
// assistant turn of the history (the format the model was trained to
// write) parse back into the same calls with the family Detect reads from
// that template: ChatML and Qwen2.5 (Hermes), Qwen3.5 (QwenXML), Llama
// 3.2 (Llama3, which writes one call a turn).
func TestRoundTrip(t *testing.T) {
	params := json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {"type": "object"}}}`)
	tools := []chat.ToolSpec{{Name: "get_weather", Description: "Weather.", Parameters: params}, {Name: "get_time"}}
	calls := []chat.ToolCall{
		{ID: "call_1", Name: "get_weather", Arguments: `{"city": "New York\nNY", "days": 3, "units": {"temp": "C"}}`},
		{ID: "call_2", Name: "get_time", Arguments: `{}`},
	}
	for _, tc := range []struct {
		template string
		calls    []chat.ToolCall
	}{
		{"", calls},
		{"qwen2.5.jinja", calls},
		{"qwen3.5.jinja", calls},
		{"llama3.2.jinja", calls[:1]},
	} {
		t.Run(tc.template, func(t *testing.T) {
			tmpl := chat.ChatML()
			if tc.template != "" {
				src, err := os.ReadFile(filepath.Join("..", "chat", "testdata", tc.template))
				if err != nil {
					t.Fatal(err)
				}
				if tmpl, err = chat.Parse(string(src)); err != nil {
					t.Fatal(err)
				}
			}
			msgs := []chat.Message{{Role: "user", Content: "Weather?"}, {Role: "assistant", NullContent: true, ToolCalls: tc.calls}}
			before, err := tmpl.Render(msgs[:1], chat.Options{AddGenerationPrompt: true, Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			after, err := tmpl.Render(msgs, chat.Options{Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			// The assistant turn as the model would write it: after the
			// generation prompt, up to its end-of-turn token.
			out, ok := strings.CutPrefix(after, before)
			if !ok {
				t.Fatalf("the rendering with the call does not extend the prompt:\n%q\n%q", before, after)
			}
			out, _, _ = strings.Cut(out, "<|im_end|>")
			out, _, _ = strings.Cut(out, "<|eot_id|>")
			family := toolcall.Detect(tmpl.Source())
			var ptools []toolcall.Tool
			for _, tl := range tools {
				ptools = append(ptools, toolcall.Tool{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters})
			}
			n := 0
			p := toolcall.NewParser(family, ptools, toolcall.Options{
				Thinking: strings.HasSuffix(before, "<think>\n"), // Qwen3.5's generation prompt opens it
				NewID:    func() string { n++; return []string{"", "call_1", "call_2"}[n] },
			})
			for _, e := range append(p.Push(out), p.Flush()...) {
				if e.Kind == toolcall.Content || e.Kind == toolcall.Reasoning && strings.TrimSpace(e.Text) != "" {
					t.Errorf("%s: unexpected %s %q in %q", family, e.Kind, e.Text, out)
				}
			}
			var want, got []any
			for _, c := range tc.calls {
				want = append(want, []any{c.ID, c.Name, decode(t, c.Arguments)})
			}
			for _, c := range p.Calls() {
				got = append(got, []any{c.ID, c.Name, decode(t, c.Arguments)})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: calls parsed from %q (-want +got):\n%s", family, out, diff)
			}
		})
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
