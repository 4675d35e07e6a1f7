package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// A splitter is a byte-level BPE pre-tokenizer: it cuts text into the words
// that BPE merges within. The splits the models use are regular expressions
// with a negative lookahead (`\s+(?!\S)`), which Go's regexp lacks, so each
// is written out by hand below with the same leftmost-first alternation
// semantics; the comments quote the expression each one implements.
type splitter uint8

const (
	// splitGPT2 is GPT-2's split:
	//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
	splitGPT2 splitter = iota + 1
	// splitLlama3 is Llama 3's split (numbers in runs of up to three):
	//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	splitLlama3
	// splitQwen2 is Llama 3's split with every digit on its own (Qwen2, Qwen3).
	splitQwen2
	// splitQwen35 is Qwen2's split with combining marks (\p{M}) counted as
	// letters, so that a mark stays in its word instead of starting a
	// symbol run (Qwen3.5: llama.cpp's LLAMA_VOCAB_PRE_TYPE_QWEN35, whose
	// tokenizer.json pattern this is):
	//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	// Marks in the optional leading character change nothing: a mark
	// there is itself in [\p{L}\p{M}], so the word is the same run.
	splitQwen35
	// splitDigitsGPT2 isolates every digit, then applies GPT-2's split to
	// the text between digits (SmolLM, StarCoder).
	splitDigitsGPT2
)

// Split patterns as Hugging Face tokenizer.json files spell them.
const (
	patternGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	patternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternQwen35 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patternQwen35Cpp is patternQwen35 as llama.cpp spells it in
	// llama-vocab.cpp, the case-insensitive group written out.
	patternQwen35Cpp = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// splitterForPattern recognises a Split pre-tokenizer's regular expression.
func splitterForPattern(p string) (splitter, bool) {
	switch p {
	case patternGPT2:
		return splitGPT2, true
	case patternLlama3:
		return splitLlama3, true
	case patternQwen2:
		return splitQwen2, true
	case patternQwen35, patternQwen35Cpp:
		return splitQwen35, true
	}
	return 0, false
}

// splitterForPre maps GGUF's tokenizer.ggml.pre names (llama.cpp's) to a
// split.
func splitterForPre(pre string) (sp splitter, ignoreMerges bool, ok bool) {
	switch pre {
	case "", "gpt-2", "gpt2", "mpt", "olmo", "jais", "trillion":
		return splitGPT2, false, true
	case "llama-bpe", "llama3", "falcon3", "smaug-bpe", "dbrx":
		return splitLlama3, pre == "llama-bpe" || pre == "llama3", true
	case "qwen2", "stablelm2", "deepseek-r1-qwen", "hunyuan":
		return splitQwen2, false, true
	case "qwen35":
		return splitQwen35, false, true
	case "smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva":
		return splitDigitsGPT2, false, true
	}
	return 0, false, false
}

// split appends to dst the end offsets of consecutive words covering s.
func (sp splitter) split(s string, dst []int) []int {
	switch sp {
	case splitDigitsGPT2:
		for i := 0; i < len(s); {
			_, c, w := classAt(s, i)
			if c == classNumber {
				i += w
				dst = append(dst, i)
				continue
			}
			j := i + w
			for j < len(s) {
				if _, c, w := classAt(s, j); c != classNumber {
					j += w
					continue
				}
				break
			}
			seg := s[:j]
			for i < j {
				i = matchGPT2(seg, i)
				dst = append(dst, i)
			}
		}
	case splitLlama3, splitQwen2, splitQwen35:
		maxDigits := 3
		if sp != splitLlama3 {
			maxDigits = 1
		}
		marks := sp == splitQwen35
		for i := 0; i < len(s); {
			i = matchLlama3(s, i, maxDigits, marks)
			dst = append(dst, i)
		}
	default:
		for i := 0; i < len(s); {
			i = matchGPT2(s, i)
			dst = append(dst, i)
		}
	}
	return dst
}

type charClass uint8

const (
	classOther  charClass = iota // [^\s\p{L}\p{N}]
	classLetter                  // \p{L}
	classNumber                  // \p{N}
	classSpace                   // \s
)

var asciiClass = func() (t [utf8.RuneSelf]charClass) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classOfRune(r)
	}
	return t
}()

func classOfRune(r rune) charClass {
	switch {
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// classAt decodes the code point at s[i]; an invalid byte is one code point
// of class other. At the end of s it returns width 0.
func classAt(s string, i int) (rune, charClass, int) {
	if i >= len(s) {
		return 0, classOther, 0
	}
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), asciiClass[b], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && w == 1 {
		return r, classOther, 1
	}
	return r, classOfRune(r), w
}

// classAtMarks is classAt with, when marks is set, combining marks
// (\p{M}) in the letter class, as Qwen3.5's split counts them. No ASCII
// character is a mark.
func classAtMarks(s string, i int, marks bool) (rune, charClass, int) {
	r, c, w := classAt(s, i)
	if marks && c == classOther && r >= utf8.RuneSelf && unicode.IsMark(r) {
		c = classLetter
	}
	return r, c, w
}

// runOf returns the end of the run of class c that starts at i (marks as
// in classAtMarks).
func runOf(s string, i int, c charClass, marks bool) int {
	for i < len(s) {
		_, ci, w := classAtMarks(s, i, marks)
		if ci != c {
			break
		}
		i += w
	}
	return i
}

// contraction returns the length of 's|'t|'re|'ve|'m|'ll|'d at s[i] (the
// apostrophe included), or 0. foldCase makes the letters case-insensitive.
func contraction(s string, i int, foldCase bool) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	lower := func(b byte) byte {
		if foldCase && b >= 'A' && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return b
	}
	switch lower(s[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && lower(s[i+2]) == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && lower(s[i+2]) == 'l' {
			return 3
		}
	}
	return 0
}

// matchSpaces implements `\s+(?!\S)|\s+` at a whitespace code point: the
// whole run when it ends the text or is a single code point, else the run
// less its last code point (which then leads the next word).
func matchSpaces(s string, i int) int {
	end, last, n := i, i, 0
	for end < len(s) {
		_, c, w := classAt(s, end)
		if c != classSpace {
			break
		}
		last = end
		end += w
		n++
	}
	if end == len(s) || n < 2 {
		return end
	}
	return last
}

// matchGPT2 returns the end of the GPT-2 word starting at s[i].
func matchGPT2(s string, i int) int {
	if n := contraction(s, i, false); n > 0 {
		return i + n
	}
	r, c, w := classAt(s, i)
	if r == ' ' {
		if _, c2, w2 := classAt(s, i+w); w2 > 0 && c2 != classSpace {
			return runOf(s, i+w, c2, false)
		}
	}
	if c != classSpace {
		return runOf(s, i, c, false)
	}
	return matchSpaces(s, i)
}

// matchLlama3 returns the end of the Llama 3 (or Qwen2, with maxDigits 1;
// or Qwen3.5, with marks too) word starting at s[i].
func matchLlama3(s string, i int, maxDigits int, marks bool) int {
	if n := contraction(s, i, true); n > 0 {
		return i + n
	}
	r, c, w := classAtMarks(s, i, marks)
	// [^\r\n\p{L}\p{N}]?\p{L}+ (Qwen3.5: [\p{L}\p{M}]+, marks being
	// classLetter here)
	if c == classLetter {
		return runOf(s, i, classLetter, marks)
	}
	if r != '\r' && r != '\n' && c != classNumber {
		if _, c2, w2 := classAtMarks(s, i+w, marks); w2 > 0 && c2 == classLetter {
			return runOf(s, i+w, classLetter, marks)
		}
	}
	// \p{N}{1,maxDigits}
	if c == classNumber {
		j := i + w
		for k := 1; k < maxDigits; k++ {
			_, c2, w2 := classAtMarks(s, j, marks)
			if w2 == 0 || c2 != classNumber {
				break
			}
			j += w2
		}
		return j
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*` (Qwen3.5: marks excluded too)
	j := -1
	if r == ' ' {
		if _, c2, w2 := classAtMarks(s, i+w, marks); w2 > 0 && c2 == classOther {
			j = runOf(s, i+w, classOther, marks)
		}
	} else if c == classOther {
		j = runOf(s, i, classOther, marks)
	}
	if j >= 0 {
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// \s*[\r\n]+ : through the last line break of the whitespace run.
	lastBreak := -1
	for k := i; k < len(s); {
		_, ck, wk := classAtMarks(s, k, marks)
		if ck != classSpace {
			break
		}
		if s[k] == '\r' || s[k] == '\n' {
			lastBreak = k + 1
		}
		k += wk
	}
	if lastBreak > 0 {
		return lastBreak
	}
	return matchSpaces(s, i)
}
