package llama

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/tokenizer"
)

// hfTokenizer reads a Hugging Face directory's tokenizer.json, the chat
// template of tokenizer_config.json (nil when it has none) and the
// end-of-sequence ids of generation_config.json (nil when absent). It is
// kept apart so that the tokenizer package's own directory reader can
// replace it.
func hfTokenizer(dir string) (*tokenizer.Tokenizer, *chat.Template, []int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("llama: hf directory: %w", err)
	}
	tok, err := tokenizer.FromHuggingFace(data)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	var tmpl *chat.Template
	if data, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		var tc struct {
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if err := json.Unmarshal(data, &tc); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: tokenizer_config.json: %w", ErrFormat, err)
		}
		var src string
		if len(tc.ChatTemplate) > 0 && string(tc.ChatTemplate) != "null" {
			// A list of named templates is not supported here: only a string.
			if err := json.Unmarshal(tc.ChatTemplate, &src); err != nil {
				return nil, nil, nil, fmt.Errorf("%w: tokenizer_config.json chat_template is not a string: %w", ErrFormat, err)
			}
		}
		if src != "" {
			if tmpl, err = chat.Parse(src); err != nil {
				return nil, nil, nil, fmt.Errorf("tokenizer_config.json chat_template: %w", err)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, fmt.Errorf("llama: hf directory: %w", err)
	}
	eos, err := hfEOS(dir, tok.VocabSize())
	if err != nil {
		return nil, nil, nil, err
	}
	return tok, tmpl, eos, nil
}

// hfEOS reads generation_config.json's eos_token_id, a number or a list.
func hfEOS(dir string, vocab int) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "generation_config.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("llama: hf directory: %w", err)
	}
	var gc struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(data, &gc); err != nil {
		return nil, fmt.Errorf("%w: generation_config.json: %w", ErrFormat, err)
	}
	if len(gc.EOS) == 0 || string(gc.EOS) == "null" {
		return nil, nil
	}
	var ids []int
	if err := json.Unmarshal(gc.EOS, &ids); err != nil {
		var one int
		if err := json.Unmarshal(gc.EOS, &one); err != nil {
			return nil, fmt.Errorf("%w: generation_config.json eos_token_id is neither an id nor a list of ids", ErrFormat)
		}
		ids = []int{one}
	}
	for _, id := range ids {
		if id < 0 || id >= vocab {
			return nil, fmt.Errorf("%w: generation_config.json eos_token_id %d outside the vocabulary of %d", ErrFormat, id, vocab)
		}
	}
	return ids, nil
}
