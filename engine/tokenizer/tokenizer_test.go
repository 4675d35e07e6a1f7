package tokenizer

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// pieces maps ids back to their vocabulary pieces, for readable diffs.
func pieces(tok *Tokenizer, ids []int) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, tok.Token(id))
	}
	return out
}

func TestSPMSegmentation(t *testing.T) {
	words := []vocabEntry{
		{"▁", -1, TypeNormal}, {"h", -5, TypeNormal}, {"e", -5, TypeNormal}, {"l", -5, TypeNormal},
		{"o", -5, TypeNormal}, {"w", -5, TypeNormal}, {"r", -5, TypeNormal}, {"d", -5, TypeNormal},
		{"▁h", -2, TypeNormal}, {"▁he", -2, TypeNormal}, {"ll", -3, TypeNormal}, {"▁hell", -2, TypeNormal},
		{"▁hello", -1, TypeNormal}, {"▁w", -2, TypeNormal}, {"or", -2, TypeNormal}, {"▁wor", -2, TypeNormal},
		{"▁world", -1, TypeNormal}, {"ld", -4, TypeNormal}, {"<|im_start|>", 0, TypeControl},
		{"<tool>", 0, TypeUserDefined}, {"<s", 10, TypeNormal},
	}
	tok := spmTokenizer(t, words, true)
	tests := []struct {
		name    string
		in      string
		special bool
		want    []string
	}{
		{"words", "hello world", false, []string{"▁hello", "▁world"}},
		{"byte fallback", "hex", false, []string{"▁he", "<0x78>"}},
		{"multi-byte fallback", "é", false, []string{"▁", "<0xC3>", "<0xA9>"}},
		{"spaces", "  ", false, []string{"▁", "▁", "▁"}},
		{"empty", "", false, []string{}},
		{"control not parsed", "<|im_start|>", false, []string{"▁", "<0x3C>", "<0x7C>", "<0x69>", "<0x6D>", "<0x5F>", "<0x73>", "<0x74>", "<0x61>", "r", "<0x74>", "<0x7C>", "<0x3E>"}},
		{"control parsed, space after special", "<|im_start|>hello", true, []string{"<|im_start|>", "▁hello"}},
		// As in llama.cpp, text after any special token gets the space prefix.
		{"user-defined always matched", "hello<tool>world", true, []string{"▁hello", "<tool>", "▁world"}},
		{"control text never merges into a control token", "<s>", false, []string{"▁", "<s", "<0x3E>"}},
		{"control parsed", "<s>", true, []string{"<s>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []int
			if tt.special {
				ids = tok.EncodeSpecial(tt.in)
			} else {
				ids = tok.Encode(tt.in)
			}
			if diff := cmp.Diff(tt.want, pieces(tok, ids)); diff != "" {
				t.Errorf("encode %q mismatch (-want +got):\n%s", tt.in, diff)
			}
			if tt.name == "user-defined always matched" {
				if diff := cmp.Diff(ids, tok.Encode(tt.in)); diff != "" {
					t.Errorf("Encode differs from EncodeSpecial for a user-defined token (-special +plain):\n%s", diff)
				}
			}
			if !tt.special {
				if got := tok.Decode(ids); got != tt.in {
					t.Errorf("Decode(Encode(%q)) = %q", tt.in, got)
				}
			}
		})
	}
}

func TestSPMScoreOrder(t *testing.T) {
	tests := []struct {
		name   string
		ab, bc float32
		want   []string
	}{
		{"ab scores higher", -1, -2, []string{"ab", "c"}},
		{"bc scores higher", -2, -1, []string{"a", "bc"}},
		{"tie goes left", -1, -1, []string{"ab", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := spmTokenizer(t, []vocabEntry{
				{"a", -9, TypeNormal}, {"b", -9, TypeNormal}, {"c", -9, TypeNormal},
				{"ab", tt.ab, TypeNormal}, {"bc", tt.bc, TypeNormal},
			}, false)
			if diff := cmp.Diff(tt.want, pieces(tok, tok.Encode("abc"))); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSPMInnerSpacePiece checks that a vocabulary with a piece holding "▁"
// after another character disables merging run by run, so the piece still
// forms across the space.
func TestSPMInnerSpacePiece(t *testing.T) {
	entries := []vocabEntry{{"a", -9, TypeNormal}, {"b", -9, TypeNormal}, {"▁", -9, TypeNormal}, {"a▁", -2, TypeNormal}, {"a▁b", -1, TypeNormal}}
	tok := spmTokenizer(t, entries, false)
	if tok.spmSplit {
		t.Fatal("spmSplit set for a vocabulary with an inner ▁")
	}
	if diff := cmp.Diff([]string{"a▁b", "▁", "a▁b"}, pieces(tok, tok.Encode("a b a b"))); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if plain := spmTokenizer(t, entries[:3], false); !plain.spmSplit {
		t.Error("spmSplit not set for a vocabulary without inner ▁")
	}
}

var testMerges = [][2]string{
	{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"Ġ", "w"}, {"o", "r"}, {"Ġw", "or"}, {"Ġwor", "ld"}, {"l", "d"},
}

func TestBPESegmentation(t *testing.T) {
	tok := bpeTokenizer(t, "qwen2", testMerges,
		vocabEntry{piece: "<|endoftext|>", typ: TypeControl}, vocabEntry{piece: "<think>", typ: TypeUserDefined})
	tests := []struct {
		name    string
		in      string
		special bool
		want    []string
	}{
		// "ld" is ranked after "Ġwor"+"ld" needs it: Ġwor l d -> l d merges (rank 8) then Ġwor ld (rank 7).
		{"merges by rank", "hello world", false, []string{"hello", "Ġworld"}},
		{"unmerged bytes", "hex", false, []string{"he", "x"}},
		{"utf-8 bytes", "é", false, []string{"Ã", "©"}},
		{"control not parsed", "<|endoftext|>", false, []string{"<|", "endoftext", "|>"}},
		{"control parsed", "a<|endoftext|>b", true, []string{"a", "<|endoftext|>", "b"}},
		{"user-defined always", "a<think>b", false, []string{"a", "<think>", "b"}},
		{"empty", "", false, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []int
			if tt.special {
				ids = tok.EncodeSpecial(tt.in)
			} else {
				ids = tok.Encode(tt.in)
			}
			got := pieces(tok, ids)
			if tt.name == "control not parsed" {
				// The bytes are left unmerged; only the round trip matters.
				if tok.Decode(ids) != tt.in || len(ids) != len(tt.in) {
					t.Errorf("Encode(%q) = %q", tt.in, got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("encode %q mismatch (-want +got):\n%s", tt.in, diff)
			}
			if got := tok.Decode(ids); got != tt.in {
				t.Errorf("Decode = %q, want %q", got, tt.in)
			}
		})
	}
}

func TestBPERankOrder(t *testing.T) {
	tests := []struct {
		name   string
		merges [][2]string
		want   []string
	}{
		{"ab first", [][2]string{{"a", "b"}, {"b", "c"}}, []string{"ab", "c"}},
		{"bc first", [][2]string{{"b", "c"}, {"a", "b"}}, []string{"a", "bc"}},
		{"repeated pair leftmost", [][2]string{{"a", "a"}}, []string{"aa", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := bpeTokenizer(t, "gpt-2", tt.merges)
			in := "abc"
			if tt.name == "repeated pair leftmost" {
				in = "aaa"
			}
			if diff := cmp.Diff(tt.want, pieces(tok, tok.Encode(in))); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromHuggingFace(t *testing.T) {
	added := []hfAddedToken{{ID: 300, Content: "<|im_end|>", Special: true}, {ID: 301, Content: "<think>"}}
	for _, pairs := range []bool{false, true} {
		t.Run(map[bool]string{false: "string merges", true: "pair merges"}[pairs], func(t *testing.T) {
			tok, err := FromHuggingFace(hfJSON(t, testMerges, added, pairs))
			if err != nil {
				t.Fatal(err)
			}
			got := pieces(tok, tok.EncodeSpecial("hello world<|im_end|><think>"))
			want := []string{"hello", "Ġworld", "<|im_end|>", "<think>"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int{300}, tok.StopIDs()); diff != "" {
				t.Errorf("StopIDs mismatch (-want +got):\n%s", diff)
			}
			if !tok.IsSpecial(300) || tok.IsSpecial(301) {
				t.Errorf("IsSpecial(300, 301) = %v, %v; want true, false", tok.IsSpecial(300), tok.IsSpecial(301))
			}
			// NFC: a decomposed é encodes like the composed one.
			if diff := cmp.Diff(tok.Encode("caf\u00e9"), tok.Encode("cafe\u0301")); diff != "" {
				t.Errorf("NFC mismatch (-composed +decomposed):\n%s", diff)
			}
		})
	}
}

func TestFromHuggingFaceErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want error
	}{
		{"not json", "{", ErrFormat},
		{"wrong model", `{"model":{"type":"Unigram","vocab":[]}}`, ErrUnsupported},
		{"no pre-tokenizer", `{"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`, ErrUnsupported},
		{"unknown regex", `{"pre_tokenizer":{"type":"Split","pattern":{"Regex":"x"},"behavior":"Isolated"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`, ErrUnsupported},
		{"negative id", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":-1},"merges":[]}}`, ErrFormat},
		{"huge id", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":99999999},"merges":[]}}`, ErrFormat},
		{"bad merge", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":["ab"]}}`, ErrFormat},
		{"bad merge pair", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":[["a"]]}}`, ErrFormat},
		{"empty vocab", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{},"merges":[]}}`, ErrFormat},
		{"normalizer", `{"normalizer":{"type":"Lowercase"},"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0}}}`, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromHuggingFace([]byte(tt.json))
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestFromGGUFErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(w *gguf.Writer)
		want error
	}{
		{"unknown model", func(w *gguf.Writer) { w.SetString(keyModel, "t5") }, ErrUnsupported},
		{"no tokens", func(w *gguf.Writer) { w.SetStrings(keyTokens, nil) }, ErrFormat},
		{"short scores", func(w *gguf.Writer) { w.SetFloat32s(keyScores, []float32{1}) }, ErrFormat},
		{"short types", func(w *gguf.Writer) { w.SetInt32s(keyTokenType, []int32{1}) }, ErrFormat},
		{"bos out of range", func(w *gguf.Writer) { w.SetUint32(keyBOS, 1<<20) }, ErrFormat},
		{"unknown pre", func(w *gguf.Writer) { w.SetString(keyModel, "gpt2"); w.SetString(keyPre, "nope") }, ErrUnsupported},
		{"no merges", func(w *gguf.Writer) { w.SetString(keyModel, "gpt2") }, ErrFormat},
		{"bad merge", func(w *gguf.Writer) { w.SetString(keyModel, "gpt2"); w.SetStrings(keyMerges, []string{"ab"}) }, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := spmWriter(nil, true)
			tt.edit(w)
			_, err := fromGGUFBytes(t, w)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("no model", func(t *testing.T) {
		if _, err := fromGGUFBytes(t, gguf.NewWriter()); !errors.Is(err, ErrFormat) {
			t.Errorf("err = %v, want ErrFormat", err)
		}
	})
}

func TestSpecialIDs(t *testing.T) {
	tok := spmTokenizer(t, []vocabEntry{{"<|end|>", 0, TypeControl}, {"<|eot_id|>", 0, TypeNormal}}, true)
	type ids struct {
		BOS, EOS int
		AddBOS   bool
		Stop     []int
	}
	want := ids{BOS: 1, EOS: 2, AddBOS: true, Stop: []int{2, 259}}
	got := ids{tok.BOS(), tok.EOS(), tok.AddBOS(), tok.StopIDs()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if id, ok := tok.ID("<|end|>"); !ok || id != 259 || tok.Type(id) != TypeControl || tok.Token(id) != "<|end|>" {
		t.Errorf("ID(<|end|>) = %d, %v", id, ok)
	}
	if tok.Token(-1) != "" || tok.Token(1<<30) != "" || tok.IsSpecial(-1) || tok.Type(1<<30) != TypeUndefined {
		t.Error("out-of-range ids must be harmless")
	}
}

// TestConcurrentEncode shares tokenizers between goroutines (run with
// -race): results must equal the sequential ones.
func TestConcurrentEncode(t *testing.T) {
	toks := []*Tokenizer{English(), bpeTokenizer(t, "gpt-2", testMerges), spmTokenizer(t, []vocabEntry{{"▁a", -1, TypeNormal}}, true)}
	texts := []string{"hello world", "a a a", "naïve café 😀", "The quick brown fox."}
	want := make([][][]int, len(toks))
	for i, tok := range toks {
		for _, s := range texts {
			want[i] = append(want[i], tok.Encode(s))
		}
	}
	errs := make(chan string, 64)
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for n := range 50 {
				i, j := (g+n)%len(toks), n%len(texts)
				if got := toks[i].Encode(texts[j]); !cmp.Equal(want[i][j], got) {
					errs <- cmp.Diff(want[i][j], got)
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Encode differs (-want +got):\n%s", e)
	}
}

// TestWithBOS: BOS goes in front exactly when the tokenizer asks for it
// and the ids do not begin with it already.
func TestWithBOS(t *testing.T) {
	tok := &Tokenizer{bos: 1, addBOS: true}
	for _, c := range []struct{ in, want []int }{
		{nil, []int{1}}, {[]int{5, 6}, []int{1, 5, 6}}, {[]int{1, 5}, []int{1, 5}},
	} {
		if got := tok.WithBOS(c.in); !slices.Equal(got, c.want) {
			t.Errorf("WithBOS(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, off := range []*Tokenizer{{bos: 1}, {bos: -1, addBOS: true}} {
		if got := off.WithBOS([]int{5}); !slices.Equal(got, []int{5}) {
			t.Errorf("without BOS (%+v): WithBOS([5]) = %v", *off, got)
		}
	}
}
