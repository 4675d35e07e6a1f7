package tokenizer

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEncodeTemplated: control tokens are recognised in the markup only;
// one that overlaps a plain span, even partly, is text; user-defined
// tokens match everywhere.
func TestEncodeTemplated(t *testing.T) {
	tok := bpeTokenizer(t, "llama-bpe", testMerges, vocabEntry{piece: "<|endoftext|>", typ: TypeControl}, vocabEntry{piece: "<think>", typ: TypeUserDefined})
	eot, _ := tok.ID("<|endoftext|>")
	think, _ := tok.ID("<think>")
	const text = "<|endoftext|>ab<|endoftext|><think><|endoftext|>"
	tests := []struct {
		name  string
		plain []Span
		want  []int // the ids of the special tokens kept, in order
	}{
		{"no spans: all markup", nil, []int{eot, eot, think, eot}},
		{"content is the middle marker", []Span{{15, 28}}, []int{eot, think, eot}},
		{"content covers half a marker", []Span{{20, 22}}, []int{eot, think, eot}},
		{"content ends where a marker starts", []Span{{13, 15}}, []int{eot, eot, think, eot}},
		{"everything is content", []Span{{0, len(text)}}, []int{think}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, id := range tok.EncodeTemplated(text, tc.plain) {
				if id == eot || id == think {
					got = append(got, id)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("special ids (-want +got):\n%s", d)
			}
		})
	}
	if !tok.ContainsControl("x<|endoftext|>") || tok.ContainsControl("x<think><|endof") {
		t.Error("ContainsControl: wrong answer")
	}
}

// FuzzEncodeTemplated: with no plain span EncodeTemplated is
// EncodeSpecial, with the whole text plain it is Encode, and whatever the
// spans no control token starts inside one.
func FuzzEncodeTemplated(f *testing.F) {
	f.Add("<|c|>a <|endoftext|>b</s>", 2, 9)
	f.Add("<|endoftext|><think>", 0, 3)
	set := fuzzSet(f)
	f.Fuzz(func(t *testing.T, s string, a, b int) {
		for name, tok := range set {
			if got, want := tok.EncodeTemplated(s, nil), tok.EncodeSpecial(s); !slices.Equal(got, want) {
				t.Fatalf("%s: no spans: %v, EncodeSpecial %v", name, got, want)
			}
			if got, want := tok.EncodeTemplated(s, []Span{{0, len(s)}}), tok.Encode(s); !slices.Equal(got, want) {
				t.Fatalf("%s: all plain: %v, Encode %v", name, got, want)
			}
			if a < 0 || b < a || b > len(s) {
				continue
			}
			// Control tokens outside [a, b) are all that EncodeSpecial finds
			// in the text with [a, b) removed, at most.
			n := 0
			for _, id := range tok.EncodeTemplated(s, []Span{{a, b}}) {
				if tok.Type(id) == TypeControl {
					n++
				}
			}
			m := 0
			for _, part := range []string{s[:a], s[b:]} {
				for _, id := range tok.EncodeSpecial(part) {
					if tok.Type(id) == TypeControl {
						m++
					}
				}
			}
			if n > m {
				t.Fatalf("%s: %d control tokens with [%d,%d) plain, but only %d in the text around it", name, n, a, b, m)
			}
		}
	})
}
