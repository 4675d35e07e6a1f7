package llama

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/tokenizer"
)

// Loaded is a model ready to serve: its weights, and for formats that carry
// them, its tokenizer and chat template.
type Loaded struct {
	ID        string               // "kiln-tiny" or the file's base name without extension
	Model     *Model               //
	Tokenizer *tokenizer.Tokenizer // nil for a llama2.c checkpoint
	Template  *chat.Template       // nil when the model has none
}

// Close releases the model's memory map, if any. It is idempotent.
func (l *Loaded) Close() error { return l.Model.Close() }

// Open loads the model named by spec: "kiln-tiny" is the embedded default;
// a directory is a Hugging Face model directory (config.json, *.safetensors,
// tokenizer.json; see OpenHF); a path ending in .gguf, or a file starting with the GGUF magic, is a GGUF
// file (memory-mapped; its tokenizer and chat template come with it);
// anything else is read as a llama2.c checkpoint (no tokenizer, no
// template).
func Open(spec string) (*Loaded, error) { return OpenWith(spec, OpenOptions{}) }

// OpenOptions are the choices a caller may make when loading a model.
type OpenOptions struct {
	// Context caps the context length (positions per sequence) of a GGUF
	// file or a Hugging Face directory below the model's own; 0 means
	// DefaultMaxSeqLen. The embedded model and llama2.c checkpoints keep
	// theirs.
	Context int
}

// OpenWith is Open with options.
func OpenWith(spec string, o OpenOptions) (*Loaded, error) {
	if o.Context < 0 {
		return nil, fmt.Errorf("llama: context %d must not be negative", o.Context)
	}
	if spec == TinyID {
		return OpenTiny()
	}
	if st, err := os.Stat(spec); err == nil && st.IsDir() {
		return openHF(spec, o.Context)
	}
	isGGUF, err := looksGGUF(spec)
	if err != nil {
		return nil, fmt.Errorf("llama: open %s: %w", spec, err)
	}
	id := strings.TrimSuffix(filepath.Base(spec), filepath.Ext(spec))
	if !isGGUF {
		m, err := LoadLlama2C(spec)
		if err != nil {
			return nil, err
		}
		return &Loaded{ID: id, Model: m}, nil
	}
	f, err := gguf.Open(spec)
	if err != nil {
		if errors.Is(err, gguf.ErrFormat) {
			err = fmt.Errorf("%w: %w", ErrFormat, err)
		}
		return nil, fmt.Errorf("llama: open %s: %w", spec, err)
	}
	l, err := fromGGUFFile(f, id, o.Context)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("llama: open %s: %w", spec, err)
	}
	return l, nil
}

// OpenHF loads a Hugging Face model directory: the weights as FromHFDir
// does (memory-mapped), and through tokenizer.FromHFDir the tokenizer of
// tokenizer.json with the chat template of tokenizer_config.json (or
// chat_template.jinja) and the end-of-sequence ids of
// generation_config.json, which become the tokenizer's stop ids. The chat
// template is checked at load by chat.Parse. The ID is the directory's
// base name.
func OpenHF(dir string) (*Loaded, error) { return openHF(dir, 0) }

func openHF(dir string, maxSeqLen int) (*Loaded, error) {
	m, err := FromHFDir(dir, maxSeqLen)
	if err != nil {
		return nil, fmt.Errorf("llama: open %s: %w", dir, err)
	}
	l := &Loaded{ID: filepath.Base(filepath.Clean(dir)), Model: m}
	var meta tokenizer.HFMeta
	if l.Tokenizer, meta, err = tokenizer.FromHFDir(dir); err != nil {
		_ = m.Close()
		return nil, fmt.Errorf("llama: open %s: %w", dir, err)
	}
	if meta.ChatTemplate != "" {
		if l.Template, err = chat.Parse(meta.ChatTemplate); err != nil {
			_ = m.Close()
			return nil, fmt.Errorf("llama: open %s: chat template: %w", dir, err)
		}
	}
	if n := l.Tokenizer.VocabSize(); n > m.Config.Vocab {
		_ = m.Close()
		return nil, fmt.Errorf("llama: open %s: %w: tokenizer has %d tokens, the model's embedding %d", dir, ErrFormat, n, m.Config.Vocab)
	}
	return l, nil
}

// fromGGUFFile builds a Loaded that owns f (closed by Loaded.Close).
func fromGGUFFile(f *gguf.File, id string, maxSeqLen int) (*Loaded, error) {
	m, err := FromGGUF(f, maxSeqLen)
	if err != nil {
		return nil, err
	}
	m.closer = f
	l := &Loaded{ID: id, Model: m}
	if _, ok := f.Value("tokenizer.ggml.model"); ok {
		if l.Tokenizer, err = tokenizer.FromGGUF(f); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if n := l.Tokenizer.VocabSize(); n != m.Config.Vocab {
			return nil, fmt.Errorf("%w: tokenizer has %d tokens, the model's embedding %d", ErrFormat, n, m.Config.Vocab)
		}
	}
	if src, ok := f.String("tokenizer.chat_template"); ok {
		if l.Template, err = chat.Parse(src); err != nil {
			return nil, fmt.Errorf("tokenizer.chat_template: %w", err)
		}
	}
	return l, nil
}

// looksGGUF reports whether spec names a GGUF file: by extension, else by
// its first four bytes.
func looksGGUF(spec string) (bool, error) {
	if strings.HasSuffix(strings.ToLower(spec), ".gguf") {
		return true, nil
	}
	fh, err := os.Open(spec)
	if err != nil {
		return false, err
	}
	defer fh.Close()
	var magic [4]byte
	if _, err := io.ReadFull(fh, magic[:]); err != nil {
		return false, nil // too short for either format; the loader says so
	}
	return bytes.Equal(magic[:], []byte("GGUF")), nil
}
