package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The tokenizer files of a Hugging Face model directory.
const (
	HFTokenizerFile        = "tokenizer.json"
	HFTokenizerConfigFile  = "tokenizer_config.json"
	HFGenerationConfigFile = "generation_config.json"
	HFChatTemplateFile     = "chat_template.jinja"
)

// HFFiles are the contents of a Hugging Face directory's tokenizer files.
// Only TokenizerJSON is required; a nil field is a file the directory does
// not have.
type HFFiles struct {
	TokenizerJSON     []byte // tokenizer.json
	TokenizerConfig   []byte // tokenizer_config.json
	GenerationConfig  []byte // generation_config.json
	ChatTemplateJinja []byte // chat_template.jinja (newer transformers save the template there)
}

// HFMeta is what a Hugging Face directory says about its tokenizer outside
// tokenizer.json. FromHFFiles also applies it to the Tokenizer it returns
// (BOS, EOS, AddBOS, StopIDs, ChatTemplate, Detokenize), so a loader can use
// the Tokenizer alone, as with a GGUF file.
type HFMeta struct {
	// AddBOS: prompts start with BOS (tokenizer_config.json add_bos_token,
	// else whether tokenizer.json's TemplateProcessing post-processor puts
	// a special token first, as Llama 3's does).
	AddBOS bool
	// BOS, EOS and Pad are the ids of tokenizer_config.json's bos_token,
	// eos_token and pad_token (else generation_config.json's
	// bos_token_id, eos_token_id, pad_token_id), -1 when none.
	BOS, EOS, Pad int
	// EOSIDs are generation_config.json's eos_token_id (a number or a
	// list: Llama 3.1 lists <|end_of_text|>, <|eom_id|> and <|eot_id|>),
	// else EOS alone; nil when there is none. All end generation.
	EOSIDs []int
	// CleanUpSpaces is clean_up_tokenization_spaces: Detokenize removes
	// the space before punctuation and contractions.
	CleanUpSpaces bool
	// ChatTemplate is the Jinja chat template: chat_template.jinja, else
	// tokenizer_config.json's chat_template (a string, or a list of
	// {name, template} of which "default" is the chat one); "" when none.
	ChatTemplate string
}

// FromHFDir reads the tokenizer of a Hugging Face model directory:
// tokenizer.json (required), and tokenizer_config.json,
// generation_config.json and chat_template.jinja when present. See
// FromHFFiles.
func FromHFDir(dir string) (*Tokenizer, HFMeta, error) {
	var f HFFiles
	for _, x := range []struct {
		name     string
		dst      *[]byte
		required bool
	}{
		{HFTokenizerFile, &f.TokenizerJSON, true},
		{HFTokenizerConfigFile, &f.TokenizerConfig, false},
		{HFGenerationConfigFile, &f.GenerationConfig, false},
		{HFChatTemplateFile, &f.ChatTemplateJinja, false},
	} {
		data, err := os.ReadFile(filepath.Join(dir, x.name))
		switch {
		case err == nil:
			*x.dst = data
		case errors.Is(err, fs.ErrNotExist) && !x.required:
		default:
			return nil, HFMeta{}, fmt.Errorf("tokenizer: %w", err)
		}
	}
	return FromHFFiles(f)
}

// FromHFFiles builds the tokenizer of a Hugging Face directory from its
// files' contents: FromHuggingFace on tokenizer.json, then the special
// ids, BOS policy, clean-up and chat template of the other files, which
// it returns as HFMeta. A special token named in tokenizer_config.json that
// the vocabulary lacks, or an id outside it, is ErrFormat.
func FromHFFiles(f HFFiles) (*Tokenizer, HFMeta, error) {
	t, err := parseHuggingFace(f.TokenizerJSON)
	if err != nil {
		return nil, HFMeta{}, err
	}
	var cfg hfTokenizerConfig
	if f.TokenizerConfig != nil {
		if err := json.Unmarshal(f.TokenizerConfig, &cfg); err != nil {
			return nil, HFMeta{}, fmt.Errorf("%w: %s: %w", ErrFormat, HFTokenizerConfigFile, err)
		}
	}
	var gen hfGenerationConfig
	if f.GenerationConfig != nil {
		if err := json.Unmarshal(f.GenerationConfig, &gen); err != nil {
			return nil, HFMeta{}, fmt.Errorf("%w: %s: %w", ErrFormat, HFGenerationConfigFile, err)
		}
	}
	meta := HFMeta{BOS: -1, EOS: -1, Pad: -1, CleanUpSpaces: cfg.CleanUp != nil && *cfg.CleanUp}
	if meta.ChatTemplate, err = hfChatTemplate(cfg.ChatTemplate, f.ChatTemplateJinja); err != nil {
		return nil, HFMeta{}, err
	}
	if meta.EOSIDs, err = gen.EOS.ids(t.VocabSize(), "eos_token_id"); err != nil {
		return nil, HFMeta{}, err
	}
	for _, x := range []struct {
		tok   hfTokenRef
		gen   hfIDs
		name  string
		dst   *int
		guess int
	}{
		{cfg.BOS, gen.BOS, "bos", &meta.BOS, t.bos},
		{cfg.EOS, gen.EOS, "eos", &meta.EOS, t.eos},
		{cfg.Pad, gen.Pad, "pad", &meta.Pad, -1},
	} {
		if *x.dst, err = t.hfSpecial(x.tok, x.gen, x.name, x.guess); err != nil {
			return nil, HFMeta{}, err
		}
	}
	meta.AddBOS = t.addBOS
	if cfg.AddBOS != nil {
		meta.AddBOS = *cfg.AddBOS
	}
	if meta.EOSIDs == nil && meta.EOS >= 0 {
		meta.EOSIDs = []int{meta.EOS}
	}

	t.bos, t.eos, t.addBOS = meta.BOS, meta.EOS, meta.AddBOS
	t.stop = append(t.stop, meta.EOSIDs...)
	t.chatTemplate = meta.ChatTemplate
	if meta.CleanUpSpaces {
		t.clean = cleanTransformers
	}
	t.finish()
	meta.AddBOS = t.AddBOS()
	return t, meta, nil
}

// hfTokenizerConfig is the part of tokenizer_config.json read here.
type hfTokenizerConfig struct {
	AddBOS       *bool           `json:"add_bos_token"`
	BOS          hfTokenRef      `json:"bos_token"`
	EOS          hfTokenRef      `json:"eos_token"`
	Pad          hfTokenRef      `json:"pad_token"`
	CleanUp      *bool           `json:"clean_up_tokenization_spaces"`
	ChatTemplate json.RawMessage `json:"chat_template"`
}

// hfGenerationConfig is the part of generation_config.json read here.
type hfGenerationConfig struct {
	BOS hfIDs `json:"bos_token_id"`
	EOS hfIDs `json:"eos_token_id"`
	Pad hfIDs `json:"pad_token_id"`
}

// hfTokenRef is a special token as tokenizer_config.json names it: its
// text, an AddedToken object {"content": text, ...}, or null.
type hfTokenRef struct {
	text string
	set  bool
}

func (r *hfTokenRef) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(data, &r.text); err == nil {
		r.set = true
		return nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(data, &obj); err != nil || obj.Content == nil {
		return fmt.Errorf("special token %s is neither a string nor an object with content", truncate(data))
	}
	r.text, r.set = *obj.Content, true
	return nil
}

// hfIDs is a token id field of generation_config.json: a number, a list of
// numbers, or null.
type hfIDs []int

func (v *hfIDs) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		*v = nil
		return nil
	}
	var one int
	if err := json.Unmarshal(data, &one); err == nil {
		*v = hfIDs{one}
		return nil
	}
	var list []int
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("token id %s is neither a number nor a list of numbers", truncate(data))
	}
	*v = list
	return nil
}

// ids checks every id against the vocabulary size n.
func (v hfIDs) ids(n int, field string) ([]int, error) {
	for _, id := range v {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("%w: %s %s %d is not a token id below %d", ErrFormat, HFGenerationConfigFile, field, id, n)
		}
	}
	if len(v) == 0 {
		return nil, nil
	}
	return slices.Clone([]int(v)), nil
}

// hfSpecial resolves one special id: tokenizer_config.json's token text,
// else generation_config.json's first id, else guess.
func (t *Tokenizer) hfSpecial(tok hfTokenRef, gen hfIDs, name string, guess int) (int, error) {
	if tok.set {
		id, ok := t.ID(tok.text)
		if !ok {
			return -1, fmt.Errorf("%w: %s %s_token %q is not in the vocabulary", ErrFormat, HFTokenizerConfigFile, name, tok.text)
		}
		return id, nil
	}
	ids, err := gen.ids(t.VocabSize(), name+"_token_id")
	if err != nil {
		return -1, err
	}
	if len(ids) > 0 {
		return ids[0], nil
	}
	return guess, nil
}

// hfChatTemplate picks the chat template: chat_template.jinja when the
// directory has one, else tokenizer_config.json's chat_template, a string
// or a list of named templates.
func hfChatTemplate(raw json.RawMessage, jinjaFile []byte) (string, error) {
	if jinjaFile != nil {
		return string(jinjaFile), nil
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("%w: %s chat_template is neither a string nor a list of {name, template}", ErrFormat, HFTokenizerConfigFile)
	}
	names := make([]string, 0, len(named))
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
		names = append(names, n.Name)
	}
	return "", fmt.Errorf("%w: %s chat_template has no \"default\" entry among %q", ErrFormat, HFTokenizerConfigFile, names)
}

// truncate quotes at most 40 bytes of data for an error message.
func truncate(data []byte) string {
	if len(data) > 40 {
		return strings.ToValidUTF8(string(data[:40]), "?") + "..."
	}
	return string(data)
}
