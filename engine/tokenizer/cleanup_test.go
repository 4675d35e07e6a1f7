package tokenizer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCleanSpaces(t *testing.T) {
	tests := []struct {
		in, llamaCpp, transformers string
	}{
		{"Hello , world !", "Hello, world!", "Hello, world!"},
		{"end .", "end.", "end."},
		{"two  .", "two .", "two ."}, // one space goes, once
		{" .leading", ".leading", ".leading"},
		{"x ' y", "x'y", "x'y"},
		{"x ' ' y", "x'' y", "x'' y"}, // the dropped space does not precede the second quote
		{"it 's I 'm they 're we 've", "it's I'm they're we've", "it's I'm they're we've"},
		{"don 't I 'd we 'll", "don 't I 'd we 'll", "don 't I 'd we 'll"},
		{"do n't", "do n't", "don't"},
		{"I 'M", "I 'M", "I 'M"}, // case-sensitive in both
		{"trailing '", "trailing '", "trailing '"},
		{`"quoted" 'single'`, `"quoted"'single'`, `"quoted"'single'`},
		{"no spaces", "no spaces", "no spaces"},
		{"", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.llamaCpp, cleanSpacesLlamaCpp(tt.in)); diff != "" {
				t.Errorf("llama.cpp clean_spaces (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.transformers, cleanSpacesTransformers(tt.in)); diff != "" {
				t.Errorf("transformers clean_up_tokenization (-want +got):\n%s", diff)
			}
		})
	}
}

// Detokenize cleans up only where the tokenizer data asks for it; Decode
// never does.
func TestDetokenizeCleanUpByPre(t *testing.T) {
	tests := []struct {
		pre  string
		want string
	}{
		{"llama-bpe", "Hi, there."},
		{"gpt-2", "Hi, there."},
		{"qwen2", "Hi , there ."},
		{"smollm", "Hi , there ."},
	}
	for _, tt := range tests {
		t.Run(tt.pre, func(t *testing.T) {
			tok := bpeTokenizer(t, tt.pre, testMerges)
			ids := tok.Encode("Hi , there .")
			if got := tok.Detokenize(ids); got != tt.want {
				t.Errorf("Detokenize = %q, want %q", got, tt.want)
			}
			if got := tok.Decode(ids); got != "Hi , there ." {
				t.Errorf("Decode = %q, want the text unchanged", got)
			}
			if got, want := tok.CleansSpaces(), tt.want != "Hi , there ."; got != want {
				t.Errorf("CleansSpaces = %v, want %v", got, want)
			}
		})
	}
}
