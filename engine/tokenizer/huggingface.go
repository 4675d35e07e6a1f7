package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Hugging Face tokenizer.json, the parts this package reads.
type hfTokenizer struct {
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	Normalizer    *hfNormalizer   `json:"normalizer"`
	PreTokenizer  *hfPreTokenizer `json:"pre_tokenizer"`
	PostProcessor *hfPost         `json:"post_processor"`
	Decoder       *hfDecoder      `json:"decoder"`
	Model         hfModel         `json:"model"`
}

type hfAddedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

type hfNormalizer struct {
	Type        string         `json:"type"`
	Normalizers []hfNormalizer `json:"normalizers"`
}

type hfPreTokenizer struct {
	Type          string           `json:"type"`
	PreTokenizers []hfPreTokenizer `json:"pretokenizers"`
	Pattern       struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior         string `json:"behavior"`
	Invert           bool   `json:"invert"`
	AddPrefixSpace   bool   `json:"add_prefix_space"`
	UseRegex         *bool  `json:"use_regex"`
	IndividualDigits bool   `json:"individual_digits"`
}

type hfPost struct {
	Type   string `json:"type"`
	Single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
	} `json:"single"`
	Processors []hfPost `json:"processors"`
}

type hfDecoder struct {
	Type     string      `json:"type"`
	Decoders []hfDecoder `json:"decoders"`
}

type hfModel struct {
	Type         string          `json:"type"`
	Vocab        json.RawMessage `json:"vocab"`
	Merges       json.RawMessage `json:"merges"`
	IgnoreMerges bool            `json:"ignore_merges"`
	ByteFallback bool            `json:"byte_fallback"`
}

// FromHuggingFace builds a byte-level BPE tokenizer from a Hugging Face
// tokenizer.json (Qwen2/Qwen3/Qwen3.5, Llama 3, GPT-2, SmolLM and similar):
// the BPE vocabulary and merges (either serialisation), added tokens
// (special ones become control tokens, the others user-defined), an NFC
// normalizer, and a ByteLevel pre-tokenizer alone or after a Split whose
// regular expression is one of the known GPT-2, Llama 3, Qwen2 or Qwen3.5
// patterns. Other pipelines are ErrUnsupported; malformed JSON or
// inconsistent data is ErrFormat.
func FromHuggingFace(tokenizerJSON []byte) (*Tokenizer, error) {
	t, err := parseHuggingFace(tokenizerJSON)
	if err != nil {
		return nil, err
	}
	t.finish()
	return t, nil
}

// parseHuggingFace reads tokenizer.json into a Tokenizer that still needs
// finish (FromHFFiles adjusts the special ids first).
func parseHuggingFace(tokenizerJSON []byte) (*Tokenizer, error) {
	var hf hfTokenizer
	if err := json.Unmarshal(tokenizerJSON, &hf); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %w", ErrFormat, err)
	}
	if hf.Model.Type != "BPE" && (hf.Model.Type != "" || hf.Model.Merges == nil) {
		return nil, fmt.Errorf("%w: tokenizer.json model type %q (want BPE)", ErrUnsupported, hf.Model.Type)
	}
	if hf.Model.ByteFallback {
		return nil, fmt.Errorf("%w: tokenizer.json BPE with byte_fallback (SentencePiece-style; use the GGUF vocabulary)", ErrUnsupported)
	}
	var vocab map[string]int
	if err := json.Unmarshal(hf.Model.Vocab, &vocab); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json vocab: %w", ErrFormat, err)
	}
	t := &Tokenizer{kind: kindBPE, bos: -1, eos: -1, unk: -1, ignoreMerges: hf.Model.IgnoreMerges}
	var err error
	if t.nfc, err = hfNFC(hf.Normalizer); err != nil {
		return nil, err
	}
	if t.split, t.prefixSpace, err = hfSplit(hf.PreTokenizer); err != nil {
		return nil, err
	}
	if hf.Decoder != nil && !hfByteLevelDecoder(*hf.Decoder) {
		return nil, fmt.Errorf("%w: tokenizer.json decoder %q (want ByteLevel)", ErrUnsupported, hf.Decoder.Type)
	}

	if err := t.setHFVocab(vocab, hf.AddedTokens); err != nil {
		return nil, err
	}
	t.buildIDs()

	pairs, err := hfMerges(hf.Model.Merges)
	if err != nil {
		return nil, err
	}
	t.setMerges(pairs)

	if bos, ok := hfTemplateBOS(hf.PostProcessor); ok {
		if id, ok := t.ID(bos); ok {
			t.bos, t.addBOS = id, true
		}
	}
	if t.bos < 0 {
		t.bos = t.firstSpecial("<|begin_of_text|>", "<s>", "<|startoftext|>", "<bos>")
	}
	t.eos = t.firstSpecial("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>")
	return t, nil
}

// firstSpecial is the id of the first of texts that is a control token, -1
// when none is.
func (t *Tokenizer) firstSpecial(texts ...string) int {
	for _, s := range texts {
		if id, ok := t.ids[s]; ok && t.types[id] == TypeControl {
			return id
		}
	}
	return -1
}

func hfNFC(n *hfNormalizer) (bool, error) {
	if n == nil {
		return false, nil
	}
	switch n.Type {
	case "NFC":
		return true, nil
	case "Sequence":
		nfc := false
		for _, m := range n.Normalizers {
			v, err := hfNFC(&m)
			if err != nil {
				return false, err
			}
			nfc = nfc || v
		}
		return nfc, nil
	}
	return false, fmt.Errorf("%w: tokenizer.json normalizer %q", ErrUnsupported, n.Type)
}

// hfSplit maps the pre-tokenizer pipeline to a splitter.
func hfSplit(p *hfPreTokenizer) (sp splitter, prefixSpace bool, err error) {
	if p == nil {
		return 0, false, fmt.Errorf("%w: tokenizer.json has no pre_tokenizer (want ByteLevel)", ErrUnsupported)
	}
	steps := []hfPreTokenizer{*p}
	if p.Type == "Sequence" {
		steps = p.PreTokenizers
	}
	var regexSplit splitter
	digits, byteLevel, useRegex := false, false, false
	for _, s := range steps {
		switch s.Type {
		case "Split":
			if s.Pattern.Regex == nil || s.Invert || s.Behavior != "Isolated" || regexSplit != 0 {
				return 0, false, fmt.Errorf("%w: tokenizer.json Split pre-tokenizer (want one Isolated regex)", ErrUnsupported)
			}
			var ok bool
			if regexSplit, ok = splitterForPattern(*s.Pattern.Regex); !ok {
				return 0, false, fmt.Errorf("%w: tokenizer.json Split regex %q", ErrUnsupported, *s.Pattern.Regex)
			}
		case "Digits":
			if !s.IndividualDigits {
				return 0, false, fmt.Errorf("%w: tokenizer.json Digits pre-tokenizer without individual_digits", ErrUnsupported)
			}
			digits = true
		case "ByteLevel":
			byteLevel = true
			prefixSpace = s.AddPrefixSpace
			useRegex = s.UseRegex == nil || *s.UseRegex
		default:
			return 0, false, fmt.Errorf("%w: tokenizer.json pre-tokenizer %q", ErrUnsupported, s.Type)
		}
	}
	switch {
	case !byteLevel:
		return 0, false, fmt.Errorf("%w: tokenizer.json pre-tokenizer without ByteLevel", ErrUnsupported)
	case regexSplit != 0 && !digits && !useRegex:
		return regexSplit, prefixSpace, nil
	case regexSplit == 0 && digits && useRegex:
		return splitDigitsGPT2, prefixSpace, nil
	case regexSplit == 0 && !digits && useRegex:
		return splitGPT2, prefixSpace, nil
	}
	return 0, false, fmt.Errorf("%w: tokenizer.json pre-tokenizer combination", ErrUnsupported)
}

func hfByteLevelDecoder(d hfDecoder) bool {
	switch d.Type {
	case "ByteLevel":
		return true
	case "Sequence":
		for _, x := range d.Decoders {
			if hfByteLevelDecoder(x) {
				return true
			}
		}
	}
	return false
}

// hfMerges reads merges written either as "a b" strings or as ["a", "b"]
// pairs.
func hfMerges(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		pairs := make([][2]string, len(strs))
		for i, s := range strs {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("%w: tokenizer.json merge %d %q is not two pieces", ErrFormat, i, s)
			}
			pairs[i] = [2]string{a, b}
		}
		return pairs, nil
	}
	var lists [][]string
	if err := json.Unmarshal(raw, &lists); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json merges: %w", ErrFormat, err)
	}
	pairs := make([][2]string, len(lists))
	for i, l := range lists {
		if len(l) != 2 {
			return nil, fmt.Errorf("%w: tokenizer.json merge %d has %d pieces", ErrFormat, i, len(l))
		}
		pairs[i] = [2]string{l[0], l[1]}
	}
	return pairs, nil
}

// hfTemplateBOS finds the special token a TemplateProcessing post-processor
// puts before a single sequence (Llama 3's <|begin_of_text|>).
func hfTemplateBOS(p *hfPost) (string, bool) {
	if p == nil {
		return "", false
	}
	switch p.Type {
	case "TemplateProcessing":
		if len(p.Single) > 0 && p.Single[0].SpecialToken != nil {
			return p.Single[0].SpecialToken.ID, true
		}
	case "Sequence":
		for i := range p.Processors {
			if s, ok := hfTemplateBOS(&p.Processors[i]); ok {
				return s, true
			}
		}
	}
	return "", false
}

// setHFVocab fills pieces and types from the model vocabulary and the added
// tokens (special ones are control tokens, the others user-defined).
func (t *Tokenizer) setHFVocab(vocab map[string]int, added []hfAddedToken) error {
	// Ids must be dense enough to index a table; a hole is an unused id.
	limit := 2*(len(vocab)+len(added)) + 1024
	size := 0
	// inRange is checked per entry and the error formatted only on
	// failure: a Qwen3.5 vocabulary has 248,320 entries.
	inRange := func(id int) bool {
		if id < 0 || id >= limit {
			return false
		}
		size = max(size, id+1)
		return true
	}
	for p, id := range vocab {
		if !inRange(id) {
			return fmt.Errorf("%w: tokenizer.json vocab %q id %d out of range", ErrFormat, p, id)
		}
	}
	for _, a := range added {
		if !inRange(a.ID) {
			return fmt.Errorf("%w: tokenizer.json added token %q id %d out of range", ErrFormat, a.Content, a.ID)
		}
	}
	if size == 0 {
		return fmt.Errorf("%w: tokenizer.json has an empty vocabulary", ErrFormat)
	}
	t.pieces = make([]string, size)
	t.types = make([]TokenType, size)
	for i := range t.types {
		t.types[i] = TypeUnused
	}
	for p, id := range vocab {
		if t.types[id] != TypeUnused && t.pieces[id] != p {
			return fmt.Errorf("%w: tokenizer.json vocab id %d used twice", ErrFormat, id)
		}
		t.pieces[id], t.types[id] = p, TypeNormal
	}
	for _, a := range added {
		t.pieces[a.ID], t.types[a.ID] = a.Content, TypeUserDefined
		if a.Special {
			t.types[a.ID] = TypeControl
		}
		if a.Content == "" {
			t.types[a.ID] = TypeUnused
		}
	}
	return nil
}
