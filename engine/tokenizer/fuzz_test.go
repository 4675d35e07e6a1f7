package tokenizer

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
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

// FuzzFromHuggingFace checks that any tokenizer.json either fails with
// ErrFormat or ErrUnsupported or yields a tokenizer whose ids stay in range
// and which, when every byte has its byte-level symbol, gives back any
// valid (and, under an NFC normalizer, normalised) text that holds no
// added token: Decode(Encode(s)) == s.
func FuzzFromHuggingFace(f *testing.F) {
	f.Add(hfJSON(f, testMerges, []hfAddedToken{{ID: 300, Content: "<|im_end|>", Special: true}}, false), "hello world")
	f.Add(hfJSON(f, testMerges, nil, true), "naïve  wörld\n")
	f.Add([]byte(`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`), "ab")
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":5}},"added_tokens":[{"id":7,"content":"x"}]}`), "x")
	f.Add([]byte(`{`), "")
	f.Add([]byte(`null`), "")
	f.Fuzz(func(t *testing.T, data []byte, s string) {
		tok, err := FromHuggingFace(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrUnsupported", err)
			}
			return
		}
		for _, text := range []string{"hello world", "ab<|im_end|>", "x", s} {
			for _, id := range tok.EncodeSpecial(text) {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("EncodeSpecial(%q) produced id %d of %d", text, id, tok.VocabSize())
				}
			}
		}
		if roundTrips(tok, s) {
			if got := tok.Decode(tok.Encode(s)); got != s {
				t.Errorf("Decode(Encode(%q)) = %q", s, got)
			}
		}
	})
}

// roundTrips reports whether a byte-level tokenizer must give s back: s is
// valid UTF-8, normalised if the tokenizer normalises, holds no added
// token's text, and every byte has a symbol that decodes to it.
func roundTrips(tok *Tokenizer, s string) bool {
	if tok.kind != kindBPE || tok.prefixSpace || !utf8.ValidString(s) || (tok.nfc && !norm.NFC.IsNormalString(s)) {
		return false
	}
	for b, id := range tok.byteSym {
		if id < 0 || tok.decoded[id] != string([]byte{byte(b)}) {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		for _, sp := range tok.specials[s[i]] {
			if strings.HasPrefix(s[i:], sp.text) {
				return false
			}
		}
	}
	return true
}

// FuzzFromHFFiles fuzzes tokenizer_config.json and generation_config.json
// beside a valid tokenizer.json. Properties: an error wraps ErrFormat; on
// success every id in the metadata is -1 or in range and is what the
// tokenizer reports, the stop ids include the EOS ids, and text without
// special tokens round-trips through Encode and Decode, and through
// Detokenize where no clean-up applies.
func FuzzFromHFFiles(f *testing.F) {
	added := []hfAddedToken{{ID: 300, Content: "<|im_end|>", Special: true}, {ID: 301, Content: "<s>", Special: true}}
	tokJSON := hfJSON(f, testMerges, added, false)
	f.Add([]byte(`{"bos_token":"<s>","eos_token":{"content":"<|im_end|>"},"add_bos_token":true,"chat_template":"x"}`), []byte(`{"eos_token_id":[300,301]}`), "hello world")
	f.Add([]byte(`{"chat_template":[{"name":"default","template":"d"}],"clean_up_tokenization_spaces":true}`), []byte(`{"eos_token_id":300}`), "it 's fine .")
	f.Add([]byte(`{"bos_token":null,"pad_token":"<|im_end|>"}`), []byte(`{"bos_token_id":null}`), "")
	f.Add([]byte(`{"eos_token":"nope"}`), []byte(`[`), "x")
	f.Fuzz(func(t *testing.T, config, gen []byte, s string) {
		tok, meta, err := FromHFFiles(HFFiles{TokenizerJSON: tokJSON, TokenizerConfig: config, GenerationConfig: gen})
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		n := tok.VocabSize()
		for _, id := range append([]int{meta.BOS, meta.EOS, meta.Pad}, meta.EOSIDs...) {
			if id < -1 || id >= n {
				t.Fatalf("meta %+v holds id %d of %d", meta, id, n)
			}
		}
		if tok.BOS() != meta.BOS || tok.EOS() != meta.EOS || tok.AddBOS() != meta.AddBOS || tok.ChatTemplate() != meta.ChatTemplate {
			t.Fatalf("tokenizer (bos %d eos %d addBOS %v) disagrees with meta %+v", tok.BOS(), tok.EOS(), tok.AddBOS(), meta)
		}
		for _, id := range meta.EOSIDs {
			if !slices.Contains(tok.StopIDs(), id) {
				t.Fatalf("EOS id %d is not a stop id %v", id, tok.StopIDs())
			}
		}
		if !roundTrips(tok, s) {
			return
		}
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
		if want := s; !meta.CleanUpSpaces && tok.Detokenize(ids) != want {
			t.Errorf("Detokenize(Encode(%q)) = %q without clean-up", s, tok.Detokenize(ids))
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
