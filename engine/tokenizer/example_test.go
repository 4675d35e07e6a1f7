package tokenizer_test

import (
	"fmt"
	"strings"

	"github.com/kiln-ai/kiln/engine/tokenizer"
)

func ExampleEnglish() {
	tok := tokenizer.English()
	ids := tok.Encode("the quick brown fox")
	fmt.Println(len(ids), tok.Decode(ids))
	fmt.Println(tok.Token(ids[0]), tok.BOS(), tok.EOS(), tok.AddBOS())
	// Output:
	// 4 the quick brown fox
	// ▁the 1 2 true
}

func ExampleDecoder() {
	tok := tokenizer.English()
	// "é" has no piece: it falls back to two byte tokens, and the decoder
	// holds the first until the second completes the character.
	ids := tok.Encode("café is hot")
	d := tok.NewDecoder()
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("%q", d.Next(id)))
	}
	fmt.Println(strings.Join(parts, " "))
	// Output:
	// " c" "a" "f" "" "é" " is" " hot"
}
