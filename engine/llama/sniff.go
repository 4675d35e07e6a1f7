package llama

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Kind is what a file or directory holds, as Sniff tells it from its first
// bytes (a directory from the files in it), before any loader reads it.
type Kind uint8

// The kinds Sniff tells apart. Only KindGGUF, KindHFDir and KindLlama2C are
// loadable models; the others are named in the error that refuses them.
const (
	KindUnknown     Kind = iota // none of the below
	KindEmpty                   // a file of no bytes
	KindGGUF                    // GGUF magic: a model or a LoRA adapter (its metadata says which)
	KindLlama2C                 // a plausible llama2.c version 0 header
	KindHFDir                   // a directory with config.json
	KindPEFTDir                 // a directory with adapter_config.json: a LoRA adapter
	KindDir                     // a directory that is neither
	KindSafetensors             // a lone safetensors file
	KindZip                     // a zip archive: a PyTorch .bin or .pt checkpoint
	KindPickle                  // a Python pickle: a legacy PyTorch checkpoint
	KindONNX                    // an ONNX model
	KindText                    // text (JSON, YAML, a README...)
	KindLFSPointer              // a Git LFS pointer in place of the file
	KindHTML                    // an HTML page (a download of the web page)
)

var kindNames = [...]string{
	KindUnknown: "unknown", KindEmpty: "empty", KindGGUF: "gguf", KindLlama2C: "llama2.c",
	KindHFDir: "hf-dir", KindPEFTDir: "peft-dir", KindDir: "dir", KindSafetensors: "safetensors",
	KindZip: "zip", KindPickle: "pickle", KindONNX: "onnx", KindText: "text",
	KindLFSPointer: "lfs-pointer", KindHTML: "html",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// sniffLen is how many leading bytes sniffBytes looks at.
const sniffLen = 512

// Sniff says what path holds: for a directory, from the files it has; for a
// file, from its first bytes (sniffBytes). It reads at most sniffLen bytes.
// A missing path is an error wrapping ErrNotExist.
func Sniff(path string) (Kind, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return KindUnknown, notExistError{path}
	}
	if err != nil {
		return KindUnknown, err
	}
	if st.IsDir() {
		switch {
		case exists(filepath.Join(path, peftConfigFile)):
			return KindPEFTDir, nil
		case exists(filepath.Join(path, "config.json")):
			return KindHFDir, nil
		}
		return KindDir, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return KindUnknown, err
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return KindUnknown, err
	}
	return sniffBytes(head[:n], st.Size(), filepath.Ext(path)), nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// sniffBytes tells a file's kind from head, its first bytes, size, its
// length, and ext, its extension. Binary signatures come first; a llama2.c
// checkpoint, which has none, only when its seven header integers are a
// plausible shape (llama2cPlausible); text last.
func sniffBytes(head []byte, size int64, ext string) Kind {
	switch {
	case size == 0:
		return KindEmpty
	case bytes.HasPrefix(head, []byte("GGUF")):
		return KindGGUF
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return KindZip
	case len(head) >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5:
		return KindPickle
	case looksSafetensors(head, size):
		return KindSafetensors
	case strings.EqualFold(ext, ".onnx") || looksONNX(head):
		return KindONNX
	case llama2cPlausible(head, size):
		return KindLlama2C
	case looksText(head):
		return textKind(head)
	}
	return KindUnknown
}

// looksSafetensors: an 8-byte little-endian header length that fits the
// file, then the header's JSON object.
func looksSafetensors(head []byte, size int64) bool {
	if len(head) < 9 || head[8] != '{' {
		return false
	}
	n := binary.LittleEndian.Uint64(head)
	return n >= 2 && size >= 8 && n <= uint64(size-8)
}

// looksONNX: a ModelProto begins with ir_version (field 1, a small varint)
// and then producer_name (field 2) or opset_import (field 8).
func looksONNX(head []byte) bool {
	return len(head) >= 3 && head[0] == 0x08 && head[1] >= 1 && head[1] <= 20 && (head[2] == 0x12 || head[2] == 0x42 || head[2] == 0x3a)
}

// Bounds of a plausible llama2.c header: generous for any model that format
// was used for, tight enough that text or random bytes read as seven
// integers fall outside them.
const (
	plausibleDim    = 1 << 16
	plausibleHidden = 1 << 18
	plausibleLayers = 1 << 10
	plausibleVocab  = 1 << 22
	plausibleSeqLen = 1 << 21
)

// llama2cPlausible reports whether head starts with a llama2.c version 0
// header whose fields are within plausible bounds, divide as the format
// needs (dim by n_heads, n_heads by n_kv_heads). Whether the file is as
// long as the header says, the loader checks and reports precisely (a
// truncated download is still a llama2.c checkpoint).
func llama2cPlausible(head []byte, size int64) bool {
	c, _, err := parseLlama2CHeader(head)
	if err != nil {
		return false
	}
	switch {
	case c.Dim > plausibleDim, c.HiddenDim > plausibleHidden, c.Layers > plausibleLayers,
		c.Heads > c.Dim, c.Vocab > plausibleVocab, c.SeqLen > plausibleSeqLen:
		return false
	}
	return size > llama2cHeader
}

// looksText: valid UTF-8 (a rune cut at the end of head allowed) without
// control characters other than tab, newline, carriage return and form
// feed.
func looksText(head []byte) bool {
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(head)-i < utf8.UTFMax && len(head) == sniffLen // a rune cut by the read
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' || r == 0x7f {
			return false
		}
		i += n
	}
	return len(head) > 0
}

// textKind tells the text files a download can leave in place of a model.
func textKind(head []byte) Kind {
	t := strings.ToLower(string(bytes.TrimSpace(head[:min(len(head), 64)])))
	switch {
	case strings.HasPrefix(t, "version https://git-lfs.github.com/spec/"):
		return KindLFSPointer
	case strings.HasPrefix(t, "<!doctype html"), strings.HasPrefix(t, "<html"):
		return KindHTML
	}
	return KindText
}
