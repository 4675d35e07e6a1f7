package toolcall

import (
	"strings"
	"testing"
)

// BenchmarkPush measures the per-token cost of the parser on a stream of
// plain content (the common case: no allocation in steady state) and on
// each family's calls, a few bytes a push as tokens arrive.
func BenchmarkPush(b *testing.B) {
	tokens := func(s string) []string {
		var out []string
		for len(s) > 0 {
			n := min(4, len(s))
			out = append(out, s[:n])
			s = s[n:]
		}
		return out
	}
	for _, bc := range []struct {
		name   string
		family Family
		output string
	}{
		{"content", Hermes, strings.Repeat("The weather in Paris is sunny, 21 degrees. ", 20)},
		{"hermes", Hermes, caseOutput(b, "hermes text and two calls")},
		{"qwen_xml", QwenXML, caseOutput(b, "qwen_xml typed values")},
		{"llama3", Llama3, caseOutput(b, "llama3 python tag and two calls")},
	} {
		toks := tokens(bc.output)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			p := newTestParser(bc.family, false)
			n := 0
			for b.Loop() {
				p.Push(toks[n%len(toks)])
				if n++; n%len(toks) == 0 {
					p.Flush()
					p = newTestParser(bc.family, false)
				}
			}
		})
	}
}

// caseOutput is the output of the parse case named name.
func caseOutput(b *testing.B, name string) string {
	for _, tc := range parseCases {
		if tc.name == name {
			return tc.output
		}
	}
	b.Fatalf("no parse case %q", name)
	return ""
}
