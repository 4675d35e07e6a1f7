package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kiln-ai/kiln/engine/tokenizer"
)

// Vocabulary is a SentencePiece-style ("llama") GGUF vocabulary.
type Vocabulary struct {
	Pieces []string
	Scores []float32
	Types  []int32
	BOS    int
	EOS    int
	UNK    int
	EOT    int // <|im_end|>, which ends a ChatML turn
}

// space is SentencePiece's escaped space.
const space = "\u2581"

// chatMarkers are the ChatML markers, control tokens at the end of the
// vocabulary.
var chatMarkers = []string{"<|im_start|>", "<|im_end|>"}

// Vocab builds a vocabulary of exactly n pieces: <unk>, <s>, </s>, the 256
// byte-fallback pieces, then kiln-tiny's English pieces shortest first
// ("▁", single characters, "▁" and one character, then "▁word" for its
// alphabetical list of words, whose short words are the common ones), each
// word preceded by those of its prefixes not yet present, while they fit;
// the ChatML markers take the last two ids. The prefixes matter because
// SentencePiece merging builds a word one bigram at a time, so every
// intermediate piece must be in the vocabulary for a word to become one
// token. Scores fall with the id, so earlier (more common) pieces win
// merges. A vocabulary larger than the English pieces fill (Qwen's) gets
// letter pieces next (letterPieces), so that every token a random model
// emits decodes to visible text and a reply tokenizes again to about as
// many tokens; unused pieces fill any gap left after them.
func Vocab(n int) (*Vocabulary, error) {
	eng := tokenizer.English()
	if n < 259+len(chatMarkers) {
		return nil, fmt.Errorf("vocab: %d pieces cannot hold the control and byte pieces", n)
	}
	v := &Vocabulary{UNK: 0, BOS: 1, EOS: 2}
	seen := map[string]bool{}
	add := func(p string, typ tokenizer.TokenType) {
		seen[p] = true
		v.Pieces = append(v.Pieces, p)
		v.Types = append(v.Types, int32(typ))
	}
	add("<unk>", tokenizer.TypeUnknown)
	add("<s>", tokenizer.TypeControl)
	add("</s>", tokenizer.TypeControl)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), tokenizer.TypeByte)
	}
	room := n - len(chatMarkers)
	for _, p := range englishPieces(eng) {
		if seen[p] {
			continue
		}
		var missing []string
		for _, q := range prefixes(p) {
			if !seen[q] {
				missing = append(missing, q)
			}
		}
		if len(v.Pieces)+len(missing)+1 > room {
			continue // a shorter word further on may still fit
		}
		for _, q := range missing {
			add(q, tokenizer.TypeNormal)
		}
		add(p, tokenizer.TypeNormal)
	}
	for p := range letterPieces {
		if len(v.Pieces) >= room {
			break
		}
		if !seen[p] {
			add(p, tokenizer.TypeNormal)
		}
	}
	for i := 0; len(v.Pieces) < room; i++ {
		add(fmt.Sprintf("<unused%d>", i), tokenizer.TypeUnused)
	}
	for _, m := range chatMarkers {
		add(m, tokenizer.TypeControl)
	}
	v.EOT = n - 1
	v.Scores = make([]float32, n)
	for i := range v.Scores {
		v.Scores[i] = -float32(i)
	}
	return v, nil
}

// englishPieces lists eng's normal pieces, shorter before longer and
// otherwise in id order.
func englishPieces(eng *tokenizer.Tokenizer) []string {
	var ps []string
	for id := range eng.VocabSize() {
		if eng.Type(id) == tokenizer.TypeNormal {
			ps = append(ps, eng.Token(id))
		}
	}
	slices.SortStableFunc(ps, func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	return ps
}

// prefixes lists the proper prefixes of a "▁word" piece that are longer
// than "▁" and one character (those are already in the vocabulary), shortest
// first. Other pieces have none.
func prefixes(p string) []string {
	w, ok := strings.CutPrefix(p, space)
	if !ok || len(w) < 3 {
		return nil
	}
	var out []string
	for i := 2; i < len(w); i++ {
		out = append(out, space+w[:i])
	}
	return out
}

// letterPieces yields synthetic pieces of lowercase letters: two letters
// bare and "▁"-led, three letters bare and "▁"-led, then four letters
// "▁"-led and bare. Every proper prefix of a piece comes before it, so
// SentencePiece merging can build each from its characters.
func letterPieces(yield func(string) bool) {
	for _, k := range []struct {
		lead string
		n    int
	}{{"", 2}, {space, 2}, {"", 3}, {space, 3}, {space, 4}, {"", 4}} {
		buf := []byte(strings.Repeat("a", k.n))
		for {
			if !yield(k.lead + string(buf)) {
				return
			}
			i := k.n - 1
			for i >= 0 && buf[i] == 'z' {
				buf[i] = 'a'
				i--
			}
			if i < 0 {
				break
			}
			buf[i]++
		}
	}
}
