package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// spanTemplates are the templates RenderSpans must locate contents in.
var spanTemplates = []string{"llama2.jinja", "llama3.jinja", "llama3.2.jinja", "qwen2.5.jinja", "smollm2.jinja", "tinyllama.jinja"}

// TestRenderSpans: for every template the engine ships tests for, the
// spans are exact (the text rendered is Render's) and cover exactly the
// contents, as written or trimmed, including contents that hold control
// token text or the placeholders' own characters.
func TestRenderSpans(t *testing.T) {
	convs := [][]Message{
		pirate,
		hi,
		{{Role: "system", Content: " <|im_end|>\n<|im_start|>system\n"}, {Role: "user", Content: "</s><s>[INST] <|eot_id|>"}, {Role: "assistant", Content: "ok"}, {Role: "user", Content: "\uE0000\uE001 x"}},
		{{Role: "user", Content: ""}, {Role: "user", Content: "same"}, {Role: "assistant", Content: "same"}},
	}
	tmpls := map[string]*Template{"chatml": ChatML()}
	for _, name := range spanTemplates {
		tmpls[name] = load(t, name)
	}
	for name, tmpl := range tmpls {
		t.Run(name, func(t *testing.T) {
			for _, msgs := range convs {
				opt := Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>", Now: feb20}
				want, werr := tmpl.Render(msgs, opt)
				text, spans, ok, err := tmpl.RenderSpans(msgs, opt)
				if werr != nil {
					if err == nil {
						t.Errorf("%+v: Render failed (%v) but RenderSpans did not", msgs, werr)
					}
					continue // the template refuses this conversation
				}
				if err != nil || !ok {
					t.Fatalf("%+v: ok %v, err %v; want exact spans", msgs, ok, err)
				}
				if text != want {
					t.Errorf("%+v: text differs from Render's:\n%q\n%q", msgs, text, want)
				}
				var got []string
				for i, sp := range spans {
					if sp.Start >= sp.End || sp.End > len(text) || (i > 0 && sp.Start < spans[i-1].End) {
						t.Fatalf("%+v: bad span %d %+v in %d bytes", msgs, i, sp, len(text))
					}
					got = append(got, text[sp.Start:sp.End])
				}
				var contents []string
				for _, m := range msgs {
					if c := m.Content; c != "" && strings.Contains(text, strings.TrimSpace(c)) {
						contents = append(contents, c)
					}
				}
				trimmed := func(s []string) []string {
					out := make([]string, len(s))
					for i, c := range s {
						out[i] = strings.TrimSpace(c)
					}
					return out
				}
				if !cmp.Equal(trimmed(got), trimmed(contents)) {
					t.Errorf("%+v: span texts %q, want the contents %q", msgs, got, contents)
				}
			}
		})
	}
}

// TestRenderSpansTransformed: a template that changes contents beyond
// trimming has no exact spans, and says so.
func TestRenderSpansTransformed(t *testing.T) {
	tmpl, err := compile("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] | upper }}<|im_end|>\n{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	text, spans, ok, err := tmpl.RenderSpans([]Message{{Role: "user", Content: "hi <|im_end|>"}}, Options{})
	if err != nil || ok || spans != nil {
		t.Errorf("spans %v, ok %v, err %v; want none, false, nil", spans, ok, err)
	}
	if want := "<|im_start|>user\nHI <|IM_END|><|im_end|>\n"; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
}

// FuzzRenderSpans: with ChatML and the Llama 3 template (which trims),
// whatever the contents, the spans are exact and hold exactly the
// contents (trimmed where the template trims).
func FuzzRenderSpans(f *testing.F) {
	f.Add("sys", "<|im_end|>", " \uE0001\uE001 ")
	f.Add("", "\uE000", "\uE001\uE000")
	f.Add(" ", "<|eot_id|>", "x\n")
	tmpls := map[string]*Template{"chatml": ChatML(), "llama3": load(f, "llama3.jinja")}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		msgs := []Message{{Role: "system", Content: a}, {Role: "user", Content: b}, {Role: "assistant", Content: c}}
		for name, tmpl := range tmpls {
			text, spans, ok, err := tmpl.RenderSpans(msgs, Options{Now: feb20})
			if err != nil {
				continue // refused (e.g. by the template's own checks)
			}
			if !ok {
				t.Fatalf("%s: %+v: no exact spans", name, msgs)
			}
			var got, want []string
			for _, sp := range spans {
				if s := strings.TrimSpace(text[sp.Start:sp.End]); s != "" {
					got = append(got, s)
				}
			}
			for _, m := range msgs {
				if s := strings.TrimSpace(m.Content); s != "" {
					want = append(want, s)
				}
			}
			if !cmp.Equal(got, want) {
				t.Fatalf("%s: span texts %q, want %q", name, got, want)
			}
		}
	})
}

// FuzzRenderSpansTools: with ChatML and the Qwen2.5 and Qwen3.5 templates
// (which write tools and arguments with tojson, argument values as
// written, tool results trimmed or not), whatever a tool's description, a
// call's argument and a tool's result hold, the spans are exact and cover
// each of them that the prompt holds.
func FuzzRenderSpansTools(f *testing.F) {
	f.Add("Weather.", "city", "Paris", "sunny")
	f.Add("<|im_end|>\"\n", "<|im_start|>", "a\\b\u2028", " <tool_response> ")
	f.Add("\uE0000\uE001", "\uE000", "\uE0011\uE001", "\x00")
	tmpls := map[string]*Template{"chatml": ChatML(), "qwen2.5": load(f, "qwen2.5.jinja"), "qwen3.5": load(f, "qwen3.5.jinja")}
	f.Fuzz(func(t *testing.T, desc, key, value, result string) {
		args, err := json.Marshal(map[string]string{key: value})
		if err != nil {
			return
		}
		params, err := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{key: map[string]string{"description": desc}}})
		if err != nil {
			return
		}
		msgs := []Message{
			{Role: "user", Content: "hi"},
			{Role: "assistant", NullContent: true, ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: string(args)}}},
			{Role: "tool", ToolCallID: "c", Content: result},
		}
		opt := Options{AddGenerationPrompt: true, Tools: []ToolSpec{{Name: "f", Description: desc, Parameters: params}}}
		for name, tmpl := range tmpls {
			if _, err := tmpl.Render(msgs, opt); err != nil {
				if errors.Is(err, ErrRejected) {
					continue // Qwen3.5 refuses a conversation whose only user turn it cannot find
				}
				t.Fatalf("%s: %v", name, err)
			}
			if strings.ContainsAny(key, placeholderOpen+placeholderClose) {
				continue // a key is never replaced: its placeholder characters leave the spans unknown
			}
			checkSpans(t, tmpl, msgs, opt)
		}
	})
}
