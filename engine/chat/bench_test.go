package chat

import "testing"

// BenchmarkRender measures one prompt render per request: a four-turn
// conversation through ChatML and through the real Qwen2.5 and Llama-3
// templates.
func BenchmarkRender(b *testing.B) {
	for _, bc := range []struct {
		name string
		tmpl *Template
	}{
		{"chatml", ChatML()},
		{"qwen2.5", load(b, "qwen2.5.jinja")},
		{"llama3", load(b, "llama3.jinja")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.tmpl.Render(pirate, Options{BOS: "<s>", AddGenerationPrompt: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
