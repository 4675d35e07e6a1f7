package tokenizer_test

import (
	"fmt"
	"os"
	"path/filepath"
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

// A Hugging Face model directory's tokenizer: tokenizer.json, with the
// special tokens, BOS policy and chat template of tokenizer_config.json
// and the end-of-sequence ids of generation_config.json. The files here
// are a toy byte-level vocabulary ("Ġ" is the space byte).
func ExampleFromHFDir() {
	dir, err := os.MkdirTemp("", "hfdir")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Println(err)
		}
	}()
	files := map[string]string{
		"tokenizer.json": `{
			"added_tokens": [{"id": 5, "content": "<s>", "special": true}, {"id": 6, "content": "<|eot|>", "special": true}],
			"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
			"decoder": {"type": "ByteLevel"},
			"model": {"type": "BPE", "vocab": {"h": 0, "i": 1, "hi": 2, "Ġ": 3, "Ġhi": 4}, "merges": ["h i", "Ġ hi"]}
		}`,
		"tokenizer_config.json":  `{"add_bos_token": true, "bos_token": "<s>", "eos_token": "<|eot|>", "chat_template": "{{ bos_token }}..."}`,
		"generation_config.json": `{"eos_token_id": [6]}`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			fmt.Println(err)
			return
		}
	}

	tok, meta, err := tokenizer.FromHFDir(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", meta)
	ids := tok.EncodeSpecial("hi hi<|eot|>")
	fmt.Println(ids, tok.AddBOS(), tok.StopIDs(), tok.Decode(ids))
	// Output:
	// {AddBOS:true BOS:5 EOS:6 Pad:-1 EOSIDs:[6] CleanUpSpaces:false ChatTemplate:{{ bos_token }}...}
	// [2 4 6] true [6] hi hi<|eot|>
}
