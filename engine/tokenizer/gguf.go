package tokenizer

import (
	"fmt"
	"strings"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// GGUF metadata keys of the tokenizer.
const (
	keyModel          = "tokenizer.ggml.model"
	keyPre            = "tokenizer.ggml.pre"
	keyTokens         = "tokenizer.ggml.tokens"
	keyScores         = "tokenizer.ggml.scores"
	keyTokenType      = "tokenizer.ggml.token_type"
	keyMerges         = "tokenizer.ggml.merges"
	keyBOS            = "tokenizer.ggml.bos_token_id"
	keyEOS            = "tokenizer.ggml.eos_token_id"
	keyEOT            = "tokenizer.ggml.eot_token_id"
	keyEOM            = "tokenizer.ggml.eom_token_id"
	keyUNK            = "tokenizer.ggml.unknown_token_id"
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyChatTemplate   = "tokenizer.chat_template"
)

// FromGGUF builds the tokenizer a GGUF file carries in its tokenizer.ggml.*
// metadata: model "llama" is the SentencePiece-style vocabulary (scores,
// byte fallback, "▁" spaces), model "gpt2" byte-level BPE with merges and the
// pre-tokenizer split named by tokenizer.ggml.pre. Segmentation follows
// llama.cpp's. The tokenizer copies what it needs and does not retain f.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, ok := f.String(keyModel)
	if !ok {
		return nil, fmt.Errorf("%w: gguf has no %s", ErrFormat, keyModel)
	}
	tokens, ok := f.Strings(keyTokens)
	if !ok || len(tokens) == 0 {
		return nil, fmt.Errorf("%w: gguf has no %s", ErrFormat, keyTokens)
	}
	t := &Tokenizer{
		pieces:       append([]string(nil), tokens...),
		types:        make([]TokenType, len(tokens)),
		bos:          -1,
		eos:          -1,
		unk:          -1,
		chatTemplate: stringOr(f, keyChatTemplate, ""),
	}
	if raw, ok := f.Int32s(keyTokenType); ok {
		if len(raw) != len(tokens) {
			return nil, fmt.Errorf("%w: %s has %d entries for %d tokens", ErrFormat, keyTokenType, len(raw), len(tokens))
		}
		for i, v := range raw {
			if v >= 0 && v <= int32(TypeByte) {
				t.types[i] = TokenType(v)
			}
		}
	} else {
		for i := range t.types {
			t.types[i] = TypeNormal
		}
	}
	t.buildIDs()
	var err error
	for _, x := range []struct {
		key string
		dst *int
	}{{keyBOS, &t.bos}, {keyEOS, &t.eos}, {keyUNK, &t.unk}} {
		if *x.dst, err = ggufID(f, x.key, len(tokens)); err != nil {
			return nil, err
		}
	}
	for _, key := range []string{keyEOT, keyEOM} {
		id, err := ggufID(f, key, len(tokens))
		if err != nil {
			return nil, err
		}
		if id >= 0 {
			t.stop = append(t.stop, id)
		}
	}

	switch model {
	case "llama":
		t.kind = kindSPM
		t.scores = make([]float32, len(tokens))
		if s, ok := f.Float32s(keyScores); ok {
			if len(s) != len(tokens) {
				return nil, fmt.Errorf("%w: %s has %d entries for %d tokens", ErrFormat, keyScores, len(s), len(tokens))
			}
			copy(t.scores, s)
		}
		t.addSpacePrefix = boolOr(f, keyAddSpacePrefix, true)
		t.addBOS = boolOr(f, keyAddBOS, true)
	case "gpt2":
		if err := t.setGGUFBPE(f); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: %s %q", ErrUnsupported, keyModel, model)
	}
	t.finish()
	return t, nil
}

// cleanForPre is llama.cpp's clean_spaces for a byte-level BPE
// pre-tokenizer: on, except for the pre-tokenizers whose models keep
// spaces before punctuation as they are (Qwen2, DeepSeek, SmolLM, ...).
func cleanForPre(pre string) cleanup {
	switch pre {
	case "qwen2", "qwen35", "deepseek-r1-qwen", "deepseek-llm", "deepseek-coder", "deepseek-v3", "command-r",
		"smollm", "codeshell", "trillion", "hunyuan", "gpt-4o", "kimi-k2", "tekken", "chameleon":
		return cleanNone
	}
	return cleanLlamaCpp
}

func ggufID(f *gguf.File, key string, n int) (int, error) {
	if _, ok := f.Value(key); !ok {
		return -1, nil
	}
	v, ok := f.Uint(key)
	if !ok || v >= uint64(n) {
		return -1, fmt.Errorf("%w: %s is not a token id below %d", ErrFormat, key, n)
	}
	return int(v), nil
}

func stringOr(f *gguf.File, key, def string) string {
	if s, ok := f.String(key); ok {
		return s
	}
	return def
}

func boolOr(f *gguf.File, key string, def bool) bool {
	if b, ok := f.Bool(key); ok {
		return b
	}
	return def
}

// buildIDs indexes the pieces; the first of duplicate pieces wins.
func (t *Tokenizer) buildIDs() {
	t.ids = make(map[string]int, len(t.pieces))
	for id, p := range t.pieces {
		if _, dup := t.ids[p]; !dup && t.types[id] != TypeUnused {
			t.ids[p] = id
		}
	}
}

// setMerges fills the byte-level BPE tables: each byte's symbol and the
// merge rules in rank order. Rules naming pieces outside the vocabulary are
// skipped; the first rule for a pair wins.
func (t *Tokenizer) setMerges(pairs [][2]string) {
	for b, r := range byteRune {
		t.byteSym[b] = -1
		if id, ok := t.ids[string(r)]; ok {
			t.byteSym[b] = id
		}
	}
	t.merges = make(map[uint64]uint64, len(pairs))
	for rank, p := range pairs {
		l, ok1 := t.ids[p[0]]
		r, ok2 := t.ids[p[1]]
		m, ok3 := t.ids[p[0]+p[1]]
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		k := mergeKey(l, r)
		if _, dup := t.merges[k]; !dup {
			t.merges[k] = uint64(rank)<<32 | uint64(uint32(m))
		}
	}
}

// setGGUFBPE reads a "gpt2" vocabulary's pre-tokenizer and merges.
func (t *Tokenizer) setGGUFBPE(f *gguf.File) error {
	t.kind = kindBPE
	pre := stringOr(f, keyPre, "")
	sp, ignore, ok := splitterForPre(pre)
	if !ok {
		return fmt.Errorf("%w: %s %q", ErrUnsupported, keyPre, pre)
	}
	t.split, t.ignoreMerges, t.clean = sp, ignore, cleanForPre(pre)
	merges, ok := f.Strings(keyMerges)
	if !ok {
		return fmt.Errorf("%w: gguf has no %s", ErrFormat, keyMerges)
	}
	pairs := make([][2]string, 0, len(merges))
	for i, m := range merges {
		// The first half may itself be a space in a non-byte-level
		// vocabulary, so the separator is searched from index 1.
		k := -1
		if len(m) > 1 {
			k = strings.IndexByte(m[1:], ' ')
		}
		if k < 0 {
			return fmt.Errorf("%w: %s[%d] %q is not two pieces", ErrFormat, keyMerges, i, m)
		}
		pairs = append(pairs, [2]string{m[:k+1], m[k+2:]})
	}
	t.setMerges(pairs)
	t.addBOS = boolOr(f, keyAddBOS, false)
	return nil
}
