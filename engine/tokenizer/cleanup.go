package tokenizer

import "strings"

// cleanup is the space clean-up that detokenization applies after joining
// the pieces: the removal of the space that word-level tokenizers put
// before punctuation and English contractions.
type cleanup uint8

const (
	// cleanNone keeps the joined pieces as they are (SentencePiece
	// vocabularies, Qwen2/Qwen3, and Hugging Face tokenizers whose
	// tokenizer_config.json leaves clean_up_tokenization_spaces off).
	cleanNone cleanup = iota
	// cleanLlamaCpp is llama.cpp's clean_spaces (llama_detokenize), on for
	// most byte-level BPE pre-tokenizers of GGUF files, llama-bpe included.
	cleanLlamaCpp
	// cleanTransformers is transformers' clean_up_tokenization, applied by
	// decode when tokenizer_config.json sets clean_up_tokenization_spaces.
	cleanTransformers
)

// Detokenize turns ids into text as the reference implementations'
// whole-sequence decoders do: Decode, then the space clean-up the tokenizer
// data asks for (llama.cpp's clean_spaces for GGUF files, transformers'
// clean_up_tokenization_spaces for Hugging Face directories). With clean-up
// on, " ." becomes "." and " 's" "'s", so the result need not equal the
// encoded text. Generated text streams through a Decoder and is never
// cleaned up, as in llama-server; Detokenize is for whole-sequence output
// that must match those decoders.
func (t *Tokenizer) Detokenize(ids []int) string {
	s := t.Decode(ids)
	switch t.clean {
	case cleanLlamaCpp:
		return cleanSpacesLlamaCpp(s)
	case cleanTransformers:
		return cleanSpacesTransformers(s)
	}
	return s
}

// CleansSpaces reports whether Detokenize applies a space clean-up.
func (t *Tokenizer) CleansSpaces() bool { return t.clean != cleanNone }

// cleanSpacesLlamaCpp applies llama.cpp's three clean_spaces passes, each
// over the output of the one before:
//  1. a space before ? ! . or , is removed;
//  2. " ' " becomes "'";
//  3. the space before 's, 'm, 're and 've is removed ('t, 'd and 'll keep
//     theirs).
//
// Each pass looks at the text as it stood before the pass, byte by byte.
func cleanSpacesLlamaCpp(s string) string {
	if !strings.Contains(s, " ") {
		return s
	}
	b := []byte(s)
	out := make([]byte, 0, len(b))
	for i, c := range b {
		if i > 0 && b[i-1] == ' ' && (c == '?' || c == '!' || c == '.' || c == ',') {
			out = out[:len(out)-1]
		}
		out = append(out, c)
	}

	b, out = out, make([]byte, 0, len(out))
	for i := 0; i < len(b); i++ {
		c := b[i]
		// A space dropped after an apostrophe no longer precedes the next
		// byte, so the test reads the byte before as it is in out.
		if i > 0 && c == '\'' && i+1 < len(b) && len(out) > 0 && out[len(out)-1] == ' ' && b[i-1] == ' ' && b[i+1] == ' ' {
			out[len(out)-1] = c
			i++ // the space after goes too
			continue
		}
		out = append(out, c)
	}

	b, out = out, make([]byte, 0, len(out))
	for i, c := range b {
		if i > 0 && b[i-1] == ' ' && c == '\'' && i+1 < len(b) && contractionDropsSpace(b[i+1:]) {
			out = out[:len(out)-1]
		}
		out = append(out, c)
	}
	return string(out)
}

// contractionDropsSpace reports whether rest (the bytes after an
// apostrophe) starts one of the contractions llama.cpp joins to the word
// before: s, m, re, ve.
func contractionDropsSpace(rest []byte) bool {
	switch rest[0] {
	case 's', 'm':
		return true
	case 'r', 'v':
		return len(rest) > 1 && rest[1] == 'e'
	}
	return false
}

// cleanSpacesTransformers applies transformers' clean_up_tokenization. The
// replacements run one after another over the whole text (a single
// strings.Replacer would apply them in one pass, which differs when one
// replacement creates another's pattern).
func cleanSpacesTransformers(s string) string {
	for _, r := range [...][2]string{
		{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
		{" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
	} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}
