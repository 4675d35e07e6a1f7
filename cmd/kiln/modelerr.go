package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kiln-ai/kiln/engine/llama"
)

// adapterHints say, per subcommand, where a LoRA adapter given as --model
// goes instead.
var adapterHints = map[string]string{
	"serve":    "put it in --adapter-dir (requests name it with \"adapter\") and give its base model as --model",
	"generate": "pass it with --adapter and give its base model as --model",
	"train":    "give its base model as --model (kiln train writes an adapter; it does not start from one)",
}

// modelError is the error of a --model that did not load, for subcommand
// cmd: the loader's, plus what to do instead when the path is a LoRA
// adapter (the flag that takes one) or does not exist but is a misspelling
// of kiln-tiny.
func modelError(cmd, spec string, err error) error {
	switch {
	case errors.Is(err, llama.ErrAdapter):
		return fmt.Errorf("%s: --model: %w; %s", cmd, err, adapterHints[cmd])
	case errors.Is(err, llama.ErrNotExist) && nearTiny(spec):
		return fmt.Errorf("%s: --model: %w; did you mean %s (the embedded model)?", cmd, err, llama.TinyID)
	case errors.Is(err, llama.ErrNotExist):
		return fmt.Errorf("%s: --model: %w (Kiln loads %s)", cmd, err, llama.Accepted)
	}
	return fmt.Errorf("%s: --model: %w", cmd, err)
}

// nearTiny reports whether a path that does not exist was probably meant
// as kiln-tiny: its name, letters only, within two edits of "kilntiny"
// ("kiln_tiny", "kilntiny", "kiln-tiney", "Kiln-Tiny.gguf"), or one half
// of it.
func nearTiny(spec string) bool {
	name := strings.ToLower(filepath.Base(spec))
	name = strings.TrimSuffix(name, filepath.Ext(name))
	letters := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		return -1
	}, name)
	return editDistance(letters, "kilntiny") <= 2 || letters == "tiny" || letters == "kiln"
}
