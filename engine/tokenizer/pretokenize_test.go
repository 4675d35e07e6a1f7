package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

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
	splitters := map[string]splitter{"gpt2": splitGPT2, "llama3": splitLlama3, "qwen2": splitQwen2, "qwen35": splitQwen35, "digits_gpt2": splitDigitsGPT2}
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
		{"empty qwen35", splitQwen35, "", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, words(tt.sp, tt.in)); diff != "" {
				t.Errorf("split %q mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestSplitQwen35 checks the Qwen3.5 split where combining marks (\p{M})
// matter, against Qwen2's split of the same text where the two must
// differ, and the parts Qwen3.5 keeps from Qwen2 (digits, contractions,
// whitespace, newlines).
func TestSplitQwen35(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []string
		qwen2 []string // Qwen2's split when it differs; nil: the same
	}{
		{"hindi namaste", "नमस्ते दुनिया", []string{"नमस्ते", " दुनिया"},
			[]string{"नमस", "्त", "े", " द", "ुन", "िय", "ा"}},
		{"combining acute", "e\u0301te\u0301", []string{"e\u0301te\u0301"}, []string{"e", "\u0301te", "\u0301"}},
		{"thai", "สวัสดีครับ", []string{"สวัสดีครับ"}, []string{"สว", "ัสด", "ีคร", "ับ"}},
		{"mark after space joins the word", "a \u0301b", []string{"a", " \u0301b"}, []string{"a", " \u0301", "b"}},
		{"lone mark is not punctuation", "\u0301!", []string{"\u0301", "!"}, []string{"\u0301!"}},
		{"mark leads a word after punctuation", "x\u0301.\u0301y", []string{"x\u0301", ".\u0301y"}, []string{"x", "\u0301.\u0301", "y"}},
		{"enclosing mark after digit", "1\u20dd", []string{"1", "\u20dd"}, nil},
		{"mark before newlines", "e\u0301\n\nx", []string{"e\u0301", "\n\n", "x"}, []string{"e", "\u0301\n\n", "x"}},
		{"single digits", "2026年8月", []string{"2", "0", "2", "6", "年", "8", "月"}, nil},
		{"devanagari digits", "१२३", []string{"१", "२", "३"}, nil},
		{"contractions fold case", "I'M we'Ll", []string{"I", "'M", " we", "'Ll"}, nil},
		{"whitespace run before a word", "a   b", []string{"a", "  ", " b"}, nil},
		{"trailing whitespace", "a \t ", []string{"a", " \t "}, nil},
		{"newline run", "x \n \ny", []string{"x", " \n \n", "y"}, nil},
		{"crlf", "x\r\n\r\ny", []string{"x", "\r\n\r\n", "y"}, nil},
		{"punctuation takes newlines", "ok.\n\nthen", []string{"ok", ".\n\n", "then"}, nil},
		{"invalid byte leads a word", "a\xffb", []string{"a", "\xffb"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, words(splitQwen35, tt.in)); diff != "" {
				t.Errorf("qwen35 split %q mismatch (-want +got):\n%s", tt.in, diff)
			}
			q2 := tt.qwen2
			if q2 == nil {
				q2 = tt.want
			}
			if diff := cmp.Diff(q2, words(splitQwen2, tt.in)); diff != "" {
				t.Errorf("qwen2 split %q mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestSplitterForQwen35 checks that both spellings of Qwen3.5's pattern
// and the GGUF pre-tokenizer name select the split, and that Qwen3.5
// keeps spaces as they are on decoding (llama.cpp: clean_spaces false).
func TestSplitterForQwen35(t *testing.T) {
	for _, p := range []string{patternQwen35, patternQwen35Cpp} {
		if sp, ok := splitterForPattern(p); !ok || sp != splitQwen35 {
			t.Errorf("splitterForPattern(%q) = %v, %v; want splitQwen35", p, sp, ok)
		}
	}
	sp, ignore, ok := splitterForPre("qwen35")
	if !ok || sp != splitQwen35 || ignore {
		t.Errorf(`splitterForPre("qwen35") = %v, %v, %v; want splitQwen35, false, true`, sp, ignore, ok)
	}
	if c := cleanForPre("qwen35"); c != cleanNone {
		t.Errorf(`cleanForPre("qwen35") = %v, want cleanNone`, c)
	}
}

// qwen35NoLookahead is Qwen3.5's pattern for Go's regexp: without the
// `\s+(?!\S)` alternative, which RE2 cannot express, with \s spelled as
// the Unicode White_Space set (Go's \s is ASCII), and with llama.cpp's
// ASCII-only contractions (Go's (?i) would also fold 's' to U+017F).
// Both regexps are leftmost-first, so on text where the lookahead cannot
// matter (see lookaheadFree) it must split as splitQwen35 does.
var qwen35NoLookahead = func() *regexp.Regexp {
	const ws = `\t\n\v\f\r \x{85}\p{Z}`
	return regexp.MustCompile(`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\pL\pN]?[\pL\pM]+|\pN|` +
		` ?[^` + ws + `\pL\pM\pN]+[\r\n]*|[` + ws + `]*[\r\n]+|[` + ws + `]+`)
}()

// lookaheadFree reports whether s is valid UTF-8 in which no two
// whitespace code points are adjacent except at the end: there
// `\s+(?!\S)|\s+` matches what `\s+` alone does (a single space before a
// non-space fails the lookahead and falls to `\s+`; a run at the end
// passes it whole).
func lookaheadFree(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	prevSpace := false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if sp && prevSpace && strings.TrimRightFunc(s[i:], unicode.IsSpace) != "" {
			return false
		}
		prevSpace = sp
	}
	return true
}

// checkQwen35Regexp compares splitQwen35 with qwen35NoLookahead on s.
func checkQwen35Regexp(t *testing.T, s string) {
	t.Helper()
	if !lookaheadFree(s) {
		return
	}
	want := []int{}
	for _, m := range qwen35NoLookahead.FindAllStringIndex(s, -1) {
		want = append(want, m[1])
	}
	if diff := cmp.Diff(want, splitQwen35.split(s, []int{})); diff != "" {
		t.Errorf("split %q: ends differ from Go's regexp (-regexp +split):\n%s", s, diff)
	}
}

// TestSplitQwen35Regexp cross-checks splitQwen35 with Go's regexp, an
// implementation independent of both the hand-written split and the
// Python golden file, on random text rich in marks.
func TestSplitQwen35Regexp(t *testing.T) {
	alphabet := []string{
		"a", "Z", " ", "0", "9", "'", "s", "L", ".", "!", "\t", "\n", "\r\n", "\u00a0", "\u3000",
		"\u0301", "\u0308", "\u093e", "\u094d", "\u0e31", "\u20dd", "\u0488", "\u0928", "\u0e2a", "\u0966", "\u4e2d", "\U0001F600",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for range 5000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		if lookaheadFree(b.String()) {
			checked++
		}
		checkQwen35Regexp(t, b.String())
	}
	if checked < 1000 {
		t.Fatalf("only %d of 5000 random texts were free of the lookahead", checked)
	}
}

// FuzzSplit checks, for every splitter and any bytes, that the words are
// non-empty and cover the input exactly (ends strictly increasing, the
// last at len(s)), and that Qwen3.5's split agrees with Go's regexp where
// the lookahead cannot matter. Run it with an execution budget:
//
//	go test -run '^$' -fuzz '^FuzzSplit$' -fuzztime 20000x ./engine/tokenizer
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"", " ", "नमस्ते दुनिया", "e\u0301\u0301 cafe\u0301", "สวัสดีครับ ผมชื่อ", "I'M 1234\r\n\r\n  x  ",
		"\u0301!\n", "a\xffb\xe0\xa4", "\t\t\u00a0\u3000y", "x\u20dd\u0488 ", "'s\u0301 \u0301's",
	} {
		f.Add(s)
	}
	all := []splitter{splitGPT2, splitLlama3, splitQwen2, splitQwen35, splitDigitsGPT2}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sp := range all {
			ends := sp.split(s, nil)
			if len(s) == 0 {
				if len(ends) != 0 {
					t.Fatalf("splitter %d: %q split into %v", sp, s, ends)
				}
				continue
			}
			if !slices.IsSorted(ends) || ends[len(ends)-1] != len(s) || slices.Contains(ends, 0) || len(slices.Compact(slices.Clone(ends))) != len(ends) {
				t.Fatalf("splitter %d: %q split at %v, which does not cover it exactly", sp, s, ends)
			}
		}
		checkQwen35Regexp(t, s)
	})
}
