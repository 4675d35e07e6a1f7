package gguf

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// raw builds GGUF bytes by hand, for inputs the Writer refuses to produce.
type raw []byte

func (r raw) u32(v uint32) raw { return binary.LittleEndian.AppendUint32(r, v) }
func (r raw) u64(v uint64) raw { return binary.LittleEndian.AppendUint64(r, v) }
func (r raw) str(s string) raw { return append(r.u64(uint64(len(s))), s...) }

func header(version uint32, tensors, kvs uint64) raw {
	return raw("GGUF").u32(version).u64(tensors).u64(kvs)
}

// tensor appends a tensor descriptor.
func (r raw) tensor(name string, typ uint32, offset uint64, dims ...uint64) raw {
	r = r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r = r.u64(d)
	}
	return r.u32(typ).u64(offset)
}

func TestParseMalformed(t *testing.T) {
	nest := func(depth int) raw {
		r := header(3, 0, 1).str("deep").u32(uint32(ValueArray))
		for range depth {
			r = r.u32(uint32(ValueArray)).u64(1)
		}
		return r.u32(uint32(ValueUint8)).u64(0)
	}
	tests := []struct {
		name string
		in   []byte
		want string // substring of the error
	}{
		{"empty", nil, "not a GGUF file"},
		{"short magic", []byte("GGU"), "not a GGUF file"},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), "not a GGUF file"},
		{"no version", []byte("GGUF"), "version"},
		{"version 1", header(1, 0, 0), "version 1"},
		{"version 4", header(4, 0, 0), "unknown version 4"},
		{"big-endian", raw("GGUF").u32(3 << 24).u64(0).u64(0), "big-endian"},
		{"no counts", raw("GGUF").u32(3), "tensor count"},
		{"huge kv count", header(3, 0, 1<<62), "metadata entries cannot fit"},
		{"huge tensor count", header(3, 1<<62, 0), "tensors cannot fit"},
		{"huge key length", header(3, 0, 1).u64(1 << 62).u64(0), "string: needs"},
		{"truncated value", header(3, 0, 1).str("k").u32(uint32(ValueUint64)).u32(0), "uint64: needs 8 bytes"},
		{"unknown value type", header(3, 0, 1).str("k").u32(13).u64(0), "unknown value type 13"},
		{"unknown elem type", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(99).u64(0), "array of unknown value type 99"},
		{"huge array count", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(uint32(ValueUint32)).u64(1 << 61), "cannot fit"},
		{"huge string in array", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(1).u64(1 << 40), "element 0"},
		{"too deep", nest(maxDepth), "nested deeper"},
		{"duplicate key", header(3, 0, 2).str("k").u32(uint32(ValueBool)).append(1).str("k").u32(uint32(ValueBool)).append(0), "duplicate metadata key"},
		{"alignment zero", header(3, 0, 1).str(KeyAlignment).u32(uint32(ValueUint32)).u32(0), "not a power of two"},
		{"alignment 24", header(3, 0, 1).str(KeyAlignment).u32(uint32(ValueUint32)).u32(24), "not a power of two"},
		{"alignment string", header(3, 0, 1).str(KeyAlignment).u32(uint32(ValueString)).str("32"), "not a power of two"},
		{"five dims", header(3, 1, 0).tensor("t", TypeF32, 0, 1, 1, 1, 1, 1), "5 dimensions"},
		{"dims overflow", header(3, 1, 0).tensor("t", TypeF32, 0, 1<<32, 1<<32), "overflows"},
		{"misaligned offset", header(3, 1, 0).tensor("t", TypeF32, 4, 1), "not a multiple of the alignment"},
		{"duplicate tensor", header(3, 2, 0).tensor("t", TypeF32, 0, 1).tensor("t", TypeF32, 32, 1).pad(64), "duplicate tensor name"},
		{"no data section", header(3, 1, 0).tensor("t", TypeF32, 0, 1), "before its data section"},
		{"data past end", header(3, 1, 0).tensor("t", TypeF32, 0, 100).pad(32), "run past the end"},
		{"partial block", header(3, 1, 0).tensor("t", TypeQ8_0, 0, 16).pad(64), "block size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", f)
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("error %q does not wrap ErrFormat", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func (r raw) append(b ...byte) raw { return append(r, b...) }

// pad zero-fills r to a multiple of n bytes.
func (r raw) pad(n int) raw {
	for len(r)%n != 0 {
		r = append(r, 0)
	}
	return r
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name        string
		in          []byte
		wantTensors int
	}{
		{"empty v3", header(3, 0, 0), 0},
		{"empty v2", header(2, 0, 0), 0},
		{"unknown tensor type", header(3, 1, 0).tensor("t", 77, 0, 8).pad(32), 1},
		{"scalar tensor", header(3, 1, 0).tensor("t", TypeF32, 0).pad(32).u32(0), 1},
		{"alignment 8", header(3, 1, 1).str(KeyAlignment).u32(uint32(ValueUint32)).u32(8).tensor("t", TypeF32, 0, 2).pad(8).u64(0), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Tensors) != tt.wantTensors {
				t.Errorf("%d tensors, want %d", len(f.Tensors), tt.wantTensors)
			}
		})
	}
}

// Every prefix of a valid file that cuts into its structure or tensor data is
// an error, never a panic.
func TestParseTruncated(t *testing.T) {
	data := encode(t, sampleWriter())
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	end := f.DataOffset()
	for _, ti := range f.Tensors {
		size, _ := ti.Size()
		end = max(end, f.DataOffset()+ti.Offset+size)
	}
	for n := range int(end) {
		if _, err := Parse(data[:n]); !errors.Is(err, ErrFormat) {
			t.Fatalf("Parse of the first %d of %d bytes: %v, want ErrFormat", n, end, err)
		}
	}
	if _, err := Parse(data[:end]); err != nil {
		t.Errorf("Parse up to the end of the last tensor: %v", err)
	}
}

// Flipping any single byte of a valid file yields a file or an error, and
// every tensor of an accepted file lies within the buffer.
func TestParseCorrupted(t *testing.T) {
	data := encode(t, sampleWriter())
	for i := range data {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			c := slices.Clone(data)
			c[i] ^= x
			checkParsed(t, c)
		}
	}
}

func TestRealVocabFiles(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "tokenizers", "gguf")
	tests := []struct {
		file       string
		wantModel  string
		wantVocab  int
		wantMerges int
		wantKeys   []string
	}{
		{"ggml-vocab-gpt-2.gguf", "gpt2", 50257, 50000, []string{
			"tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
			"tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
		}},
		{"ggml-vocab-phi-3.gguf", "llama", 32064, 0, []string{
			"tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.scores",
			"tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
			"tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id", "tokenizer.ggml.add_bos_token",
			"tokenizer.ggml.add_eos_token",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := Open(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := f.Close(); err != nil {
					t.Error(err)
				}
			})
			var keys []string
			for _, kv := range f.KV {
				if strings.HasPrefix(kv.Key, "tokenizer.ggml.") {
					keys = append(keys, kv.Key)
				}
			}
			if diff := cmp.Diff(tt.wantKeys, keys); diff != "" {
				t.Errorf("tokenizer.ggml.* keys (-want +got):\n%s", diff)
			}
			model, _ := f.String("tokenizer.ggml.model")
			tokens, _ := f.Strings("tokenizer.ggml.tokens")
			types, _ := f.Int32s("tokenizer.ggml.token_type")
			merges, _ := f.Strings("tokenizer.ggml.merges")
			got := struct {
				Model                string
				Vocab, Types, Merges int
			}{model, len(tokens), len(types), len(merges)}
			want := struct {
				Model                string
				Vocab, Types, Merges int
			}{tt.wantModel, tt.wantVocab, tt.wantVocab, tt.wantMerges}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			bos, ok := f.Uint("tokenizer.ggml.bos_token_id")
			if !ok || bos >= uint64(len(tokens)) {
				t.Errorf("bos_token_id = %d, %v; want a token id below %d", bos, ok, len(tokens))
			}
			// Re-encoding the parsed metadata reproduces the file byte for
			// byte (neither has tensors nor trailing padding).
			w := NewWriter()
			for _, kv := range f.KV {
				w.Set(kv.Key, kv.Value)
			}
			out := encode(t, w)
			if len(out) != len(f.data) || string(out) != string(f.data) {
				t.Errorf("re-encoded file differs: %d bytes, original %d", len(out), len(f.data))
			}
		})
	}
}
