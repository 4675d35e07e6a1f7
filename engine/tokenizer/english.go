package tokenizer

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed english/words.txt
var englishWords string

// English is the vocabulary of the embedded default model: <unk>=0, <s>=1,
// </s>=2, the 256 byte-fallback pieces <0x00>..<0xFF>, "▁", every printable
// ASCII character alone and after "▁", then "▁word" for about 25,000 common
// lowercase English words (see english/README.md), then the ChatML markers
// <|im_start|> and <|im_end|> as control tokens. Text is escaped
// SentencePiece-style ("▁" for spaces, one in front) and segmented by
// longest match, falling back to bytes, so any text round-trips through
// Decode and an untrained model's samples read as words. English is
// deterministic; every call returns the same immutable Tokenizer.
func English() *Tokenizer { return englishOnce() }

// chatMLMarkers are the ChatML role markers English carries as control
// tokens.
var chatMLMarkers = []string{"<|im_start|>", "<|im_end|>"}

var englishOnce = sync.OnceValue(buildEnglish)

func buildEnglish() *Tokenizer {
	pieces := []string{"<unk>", "<s>", "</s>"}
	types := []TokenType{TypeUnknown, TypeControl, TypeControl}
	for b := range 256 {
		pieces = append(pieces, fmt.Sprintf("<0x%02X>", b))
		types = append(types, TypeByte)
	}
	seen := make(map[string]bool)
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			pieces = append(pieces, p)
			types = append(types, TypeNormal)
		}
	}
	add(spaceMarker)
	for c := byte('!'); c <= '~'; c++ {
		add(string(c))
	}
	for c := byte('!'); c <= '~'; c++ {
		add(spaceMarker + string(c))
	}
	for w := range strings.Lines(englishWords) {
		if w = strings.TrimSpace(w); w != "" {
			add(spaceMarker + w)
		}
	}
	// The chat markers of the ChatML template that kiln-tiny serves with, as
	// control tokens at the end so the word ids stay put: a rendered chat
	// costs one token per marker, and <|im_end|> ends generation.
	for _, p := range chatMLMarkers {
		pieces = append(pieces, p)
		types = append(types, TypeControl)
	}
	t := &Tokenizer{
		kind:           kindWords,
		pieces:         pieces,
		types:          types,
		unk:            0,
		bos:            1,
		eos:            2,
		addBOS:         true,
		addSpacePrefix: true,
	}
	for _, p := range pieces {
		t.maxPiece = max(t.maxPiece, len(p))
	}
	t.buildIDs()
	t.finish()
	return t
}

// wordsEncode segments escaped text by longest match over the vocabulary;
// a character no piece starts with becomes byte tokens. A piece is "▁" and
// lowercase letters, "▁" and one character, or one character, which bounds
// the lengths worth trying.
func (t *Tokenizer) wordsEncode(out []int, text []byte) []int {
	for i := 0; i < len(text); {
		longest := 1
		if rest := text[i:]; len(rest) >= len(spaceMarker) && string(rest[:len(spaceMarker)]) == spaceMarker {
			k := len(spaceMarker)
			for k < len(rest) && rest[k] >= 'a' && rest[k] <= 'z' {
				k++
			}
			longest = max(k, len(spaceMarker)+1)
		}
		found := false
		for n := min(t.maxPiece, longest, len(text)-i); n > 0; n-- {
			if id, ok := t.ids[string(text[i:i+n])]; ok && t.encodable(id) {
				out = append(out, id)
				i += n
				found = true
				break
			}
		}
		if !found {
			_, n := utf8.DecodeRune(text[i:])
			out = t.appendBytes(out, text[i:i+n])
			i += n
		}
	}
	return out
}
