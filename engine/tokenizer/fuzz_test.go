package tokenizer

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// fuzzSet is the tokenizers FuzzEncodeDecode checks: vocabularies built
// here (always) and the real ones from ../shared when present.
func fuzzSet(t testing.TB) map[string]*Tokenizer {
	set := map[string]*Tokenizer{"english": English()}
	set["spm"] = spmTokenizer(t, []vocabEntry{{"▁", -1, TypeNormal}, {"a", -2, TypeNormal}, {"▁a", -1, TypeNormal}, {"<|c|>", 0, TypeControl}}, true)
	set["bpe"] = bpeTokenizer(t, "llama-bpe", testMerges, vocabEntry{piece: "<|endoftext|>", typ: TypeControl}, vocabEntry{piece: "<think>", typ: TypeUserDefined})
	if dir := sharedPath("tokenizers/gguf"); dir != "" {
		for name, file := range map[string]string{"phi3": "ggml-vocab-phi-3.gguf", "gpt2": "ggml-vocab-gpt-2.gguf"} {
			set[name] = openGGUFTokenizer(t, filepath.Join(dir, file))
		}
	}
	if dir := sharedPath("tokenizers/qwen3"); dir != "" {
		set["qwen3"] = loadQwen3(t)
	}
	return set
}

// hasUserDefined reports whether s holds a user-defined token's text, after
// which SentencePiece-style encoding inserts a space (as llama.cpp does).
func hasUserDefined(tok *Tokenizer, s string) bool {
	for i := 0; i < len(s); i++ {
		for _, sp := range tok.specials[s[i]] {
			if sp.always && strings.HasPrefix(s[i:], sp.text) {
				return true
			}
		}
	}
	return false
}

// FuzzEncodeDecode checks, for valid UTF-8 text and every tokenizer kind,
// that Decode(Encode(s)) == s (SentencePiece-style: unless s holds a
// user-defined token, after which a space is inserted; Hugging Face: for NFC
// text), that ids are in range, and that the streaming decoder produces the
// same text as Decode (with the SentencePiece prefix space kept).
func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{
		"", " ", "hello world", "  leading", "trailing  ", "tabs\tand\nnewlines\r\n", "naïve café 日本語 😀🎉",
		"I'm sure you're right", "1234567 3.14", "<|endoftext|><think>", "</s><s>", "a\u0301", "\u00a0\u3000\u2028",
	} {
		f.Add(s)
	}
	set := fuzzSet(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for name, tok := range set {
			ids := tok.Encode(s)
			for _, id := range ids {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("%s: Encode(%q) produced id %d of %d", name, s, id, tok.VocabSize())
				}
			}
			exact := true
			switch {
			case tok.kind != kindBPE && hasUserDefined(tok, s):
				exact = false
			case tok.nfc && !norm.NFC.IsNormalString(s):
				exact = false
			}
			got := tok.Decode(ids)
			if exact && got != s {
				t.Errorf("%s: Decode(Encode(%q)) = %q (ids %v)", name, s, got, ids)
			}
			d := tok.NewDecoder()
			var b strings.Builder
			for _, id := range ids {
				b.WriteString(d.Next(id))
			}
			b.WriteString(d.Flush())
			want := got
			if tok.addSpacePrefix && len(ids) > 0 && strings.HasPrefix(tok.decoded[ids[0]], " ") {
				want = " " + got
			}
			if b.String() != want {
				t.Errorf("%s: streamed %q, Decode %q", name, b.String(), want)
			}
			if tok.kind == kindBPE && exact {
				if got := tok.Decode(tok.EncodeSpecial(s)); got != s {
					t.Errorf("%s: Decode(EncodeSpecial(%q)) = %q", name, s, got)
				}
			}
		}
	})
}

// FuzzFromHuggingFace checks that any input either fails with ErrFormat or
// ErrUnsupported or yields a tokenizer whose ids stay in range.
func FuzzFromHuggingFace(f *testing.F) {
	f.Add(hfJSON(f, testMerges, []hfAddedToken{{ID: 300, Content: "<|im_end|>", Special: true}}, false))
	f.Add(hfJSON(f, testMerges, nil, true))
	f.Add([]byte(`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":5}},"added_tokens":[{"id":7,"content":"x"}]}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := FromHuggingFace(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrUnsupported", err)
			}
			return
		}
		for _, s := range []string{"hello world", "ab<|im_end|>", "x"} {
			for _, id := range tok.EncodeSpecial(s) {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("EncodeSpecial(%q) produced id %d of %d", s, id, tok.VocabSize())
				}
			}
		}
	})
}

// FuzzFromGGUF checks the same for tokenizer metadata read from GGUF bytes.
func FuzzFromGGUF(f *testing.F) {
	for _, w := range []*gguf.Writer{spmWriter([]vocabEntry{{"▁a", -1, TypeNormal}}, true), gguf.NewWriter()} {
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := gguf.Parse(data)
		if err != nil {
			return
		}
		tok, err := FromGGUF(file)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrUnsupported", err)
			}
			return
		}
		for _, id := range tok.EncodeSpecial("hello wörld <s>") {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("id %d of %d", id, tok.VocabSize())
			}
		}
	})
}
