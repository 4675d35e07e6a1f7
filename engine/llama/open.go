package llama

import (
	"errors"
	"fmt"
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
	Format    string               // FormatEmbedded, FormatGGUF, FormatHF or FormatLlama2C
	// FileBytes is the size of the weights' files (the GGUF file, the
	// directory's safetensors shards, the checkpoint); 0 for the embedded
	// model, which has none.
	FileBytes int64
	// MappedBytes is how much of those files is memory-mapped (a GGUF
	// file, safetensors shards); 0 when the weights were read into memory.
	MappedBytes int64
}

// Close releases the model's memory map, if any. It is idempotent.
func (l *Loaded) Close() error { return l.Model.Close() }

// Open loads the model named by spec: "kiln-tiny" is the embedded default;
// a directory with config.json is a Hugging Face model directory
// (config.json, *.safetensors, tokenizer.json; see OpenHF); a file starting
// with the GGUF magic is a GGUF file (memory-mapped; its tokenizer and chat
// template come with it); a file starting with a plausible llama2.c header
// is a llama2.c checkpoint (no tokenizer, no template). Anything else is
// refused by what it is (OpenWith).
func Open(spec string) (*Loaded, error) { return OpenWith(spec, OpenOptions{}) }

// OpenOptions are the choices a caller may make when loading a model.
type OpenOptions struct {
	// Context caps the context length (positions per sequence) of a GGUF
	// file or a Hugging Face directory below the model's own; 0 means
	// DefaultMaxSeqLen. The embedded model and llama2.c checkpoints keep
	// theirs.
	Context int
}

// OpenWith is Open with options. What spec names is sniffed first
// (Sniff), so that a path Open does not load is refused by what it is: a
// missing path wraps ErrNotExist, a LoRA adapter ErrAdapter, any other
// kind of file or directory ErrNotModel (a *NotModelError), never read as
// a llama2.c checkpoint.
func OpenWith(spec string, o OpenOptions) (*Loaded, error) {
	if o.Context < 0 {
		return nil, fmt.Errorf("llama: context %d must not be negative", o.Context)
	}
	if spec == TinyID {
		return OpenTiny()
	}
	kind, err := Sniff(spec)
	if err != nil {
		return nil, fmt.Errorf("llama: %w", err)
	}
	if err := refuse(spec, kind); err != nil {
		return nil, fmt.Errorf("llama: %w", err)
	}
	var l *Loaded
	switch kind {
	case KindHFDir:
		l, err = openHF(spec, o.Context)
	case KindGGUF:
		l, err = openGGUF(spec, o.Context)
	default: // KindLlama2C
		var m *Model
		if m, err = LoadLlama2C(spec); err == nil {
			l = &Loaded{ID: fileStem(spec), Model: m, Format: FormatLlama2C}
		}
	}
	if err != nil {
		return nil, err
	}
	l.FileBytes, l.MappedBytes = weightFiles(spec, kind)
	return l, nil
}

// fileStem is a file's base name without its extension: a model's ID.
func fileStem(spec string) string {
	return strings.TrimSuffix(filepath.Base(spec), filepath.Ext(spec))
}

// openGGUF memory-maps a GGUF model file, refusing a LoRA adapter's.
func openGGUF(spec string, maxSeqLen int) (*Loaded, error) {
	f, err := gguf.Open(spec)
	if err != nil {
		if errors.Is(err, gguf.ErrFormat) {
			err = fmt.Errorf("%w: %w", ErrFormat, err)
		}
		return nil, fmt.Errorf("llama: open %s: %w", spec, err)
	}
	if ggufIsAdapter(f) {
		_ = f.Close()
		return nil, fmt.Errorf("llama: %w", adapterError{spec, "a LoRA GGUF: general.type adapter"})
	}
	l, err := fromGGUFFile(f, fileStem(spec), maxSeqLen)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("llama: open %s: %w", spec, err)
	}
	return l, nil
}

// ggufIsAdapter reports whether f is a LoRA adapter rather than a model:
// general.type "adapter", or adapter.* metadata as llama.cpp writes it.
func ggufIsAdapter(f *gguf.File) bool {
	if t, _ := f.String("general.type"); t == "adapter" {
		return true
	}
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "adapter.") {
			return true
		}
	}
	return false
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
	l := &Loaded{ID: filepath.Base(filepath.Clean(dir)), Model: m, Format: FormatHF}
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
	l := &Loaded{ID: id, Model: m, Format: FormatGGUF}
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
