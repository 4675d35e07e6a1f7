package chat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRender renders arbitrary message content with the real templates.
// Properties: the ChatML and Zephyr layouts reproduce their formulas
// exactly (content is data, never template syntax); every template renders
// an alternating conversation without error, and rendering is
// deterministic.
func FuzzRender(f *testing.F) {
	f.Add("Hello!", "Arr.", "user")
	f.Add("{{ 7*7 }}{% endfor %}", "{#", "system")
	f.Add("\x00\xff<|im_end|>", "  ", "assistant")
	f.Add("", "", "")
	var templates []*Template
	for _, name := range []string{"tinyllama.jinja", "smollm2.jinja", "qwen2.5.jinja", "llama2.jinja", "llama3.jinja", "llama3.2.jinja"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		tmpl, err := Parse(string(src))
		if err != nil {
			f.Fatal(err)
		}
		templates = append(templates, tmpl)
	}
	f.Fuzz(func(t *testing.T, a, b, role string) {
		msgs := []Message{{Role: "user", Content: a}, {Role: "assistant", Content: b}, {Role: "user", Content: b + a}}
		opt := Options{BOS: "<s>", EOS: "</s>", AddGenerationPrompt: true, Now: probeOptions.Now}

		var want strings.Builder
		for _, m := range msgs {
			want.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		}
		want.WriteString("<|im_start|>assistant\n")
		if got, err := ChatML().Render(msgs, opt); err != nil || got != want.String() {
			t.Fatalf("ChatML = %q, %v; want %q", got, err, want.String())
		}

		free := []Message{{Role: role, Content: a}, {Role: "user", Content: b}}
		want.Reset()
		for _, m := range free {
			switch m.Role {
			case "user", "system", "assistant":
				want.WriteString("<|" + m.Role + "|>\n" + m.Content + "</s>\n")
			}
		}
		want.WriteString("<|assistant|>\n")
		if got, err := templates[0].Render(free, opt); err != nil || got != want.String() {
			t.Fatalf("Zephyr = %q, %v; want %q", got, err, want.String())
		}

		for i, tmpl := range templates {
			got, err := tmpl.Render(msgs, opt)
			if err != nil {
				t.Fatalf("template %d: %v", i, err)
			}
			again, err := tmpl.Render(msgs, opt)
			if err != nil || again != got {
				t.Fatalf("template %d is not deterministic: %q then %q (%v)", i, got, again, err)
			}
		}
	})
}

// FuzzParseRender compiles arbitrary template source and renders it with
// arbitrary content. Properties: no panic reaches the caller (Parse and
// Render recover one inside the engine), every error is classified
// (ErrTemplate or ErrRejected; Parse's always as ErrTemplate), a template
// Parse accepts renders a conversation holding the user's message (or,
// refusing the system message, the same conversation without it), and a successful
// render is deterministic.
func FuzzParseRender(f *testing.F) {
	for _, name := range []string{"tinyllama.jinja", "smollm2.jinja", "qwen2.5.jinja", "llama2.jinja", "llama3.jinja", "llama3.2.jinja"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src), "hi")
	}
	f.Add("{% for m in messages %}{{ m.content | upper }}{% endfor %}", "x")
	f.Add("{{ raise_exception(messages[0].content) }}", "no")
	f.Add("{% set ns = namespace(a=1) %}{{ ns.a }}{{ messages | length }}", "")
	f.Fuzz(func(t *testing.T, src, content string) {
		if tmpl, err := Parse(src); err != nil {
			if !errors.Is(err, ErrTemplate) || errors.Is(err, ErrRejected) {
				t.Fatalf("Parse error not classified as a template defect: %v", err)
			}
		} else {
			got, err := tmpl.Render(probeWithSystem, probeOptions)
			if errors.Is(err, ErrRejected) {
				got, err = tmpl.Render(probeWithoutSystem, probeOptions)
			}
			if err != nil || !strings.Contains(got, probeQuestion) {
				t.Fatalf("Parse accepted a template that cannot render the probe: %q, %v", got, err)
			}
		}
		tmpl, err := compile(src)
		if err != nil {
			if !errors.Is(err, ErrTemplate) {
				t.Fatalf("compile error not classified: %v", err)
			}
			return
		}
		msgs := []Message{{Role: "system", Content: content}, {Role: "user", Content: content}}
		got, err := tmpl.Render(msgs, Options{BOS: "<s>", EOS: "</s>"})
		if err != nil {
			if !errors.Is(err, ErrTemplate) && !errors.Is(err, ErrRejected) {
				t.Fatalf("Render error not classified: %v", err)
			}
			return
		}
		again, err := tmpl.Render(msgs, Options{BOS: "<s>", EOS: "</s>"})
		if err != nil || again != got {
			t.Fatalf("not deterministic: %q then %q (%v)", got, again, err)
		}
	})
}
