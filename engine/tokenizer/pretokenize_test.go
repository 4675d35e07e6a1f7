package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// words runs a splitter and returns the words.
func words(sp splitter, s string) []string {
	out := []string{}
	prev := 0
	for _, end := range sp.split(s, nil) {
		out = append(out, s[prev:end])
		prev = end
	}
	return out
}

// TestSplitGolden checks the hand-written splitters against the regular
// expressions themselves, as evaluated by Python's regex module
// (testdata/gen_pretokenize.py) on fixed and random strings.
func TestSplitGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/pretokenize.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []map[string]any `json:"cases"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	splitters := map[string]splitter{"gpt2": splitGPT2, "llama3": splitLlama3, "qwen2": splitQwen2, "digits_gpt2": splitDigitsGPT2}
	for i, c := range golden.Cases {
		text := c["text"].(string)
		for name, sp := range splitters {
			t.Run(fmt.Sprintf("%03d/%s", i, name), func(t *testing.T) {
				want := []string{}
				for _, w := range c[name].([]any) {
					want = append(want, w.(string))
				}
				if diff := cmp.Diff(want, words(sp, text)); diff != "" {
					t.Errorf("split %q mismatch (-want +got):\n%s", text, diff)
				}
			})
		}
	}
}

func TestSplitKnown(t *testing.T) {
	tests := []struct {
		name string
		sp   splitter
		in   string
		want []string
	}{
		{"gpt2 lookahead keeps last space", splitGPT2, "a   b", []string{"a", "  ", " b"}},
		{"gpt2 trailing spaces", splitGPT2, "a  ", []string{"a", "  "}},
		{"gpt2 contractions case-sensitive", splitGPT2, "I'M it's", []string{"I", "'", "M", " it", "'s"}},
		{"llama3 contractions fold case", splitLlama3, "I'M", []string{"I", "'M"}},
		{"llama3 digits in threes", splitLlama3, "1234567", []string{"123", "456", "7"}},
		{"qwen2 single digits", splitQwen2, "123", []string{"1", "2", "3"}},
		{"llama3 punctuation takes newlines", splitLlama3, "x.\n\ny", []string{"x", ".\n\n", "y"}},
		{"llama3 newline run", splitLlama3, "x \n \ny", []string{"x", " \n \n", "y"}},
		{"llama3 tab joins word", splitLlama3, "\tand", []string{"\tand"}},
		{"smollm digits isolated", splitDigitsGPT2, "a 12b", []string{"a", " ", "1", "2", "b"}},
		{"invalid byte is a symbol", splitGPT2, "a\xffb", []string{"a", "\xff", "b"}},
		{"empty", splitQwen2, "", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, words(tt.sp, tt.in)); diff != "" {
				t.Errorf("split %q mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
