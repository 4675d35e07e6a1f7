package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/testshared"
)

// fileBytes builds a file from a raw JSON header and a data section.
func fileBytes(header string, data []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	entries := []Entry{
		{Name: "b", DType: "F32", Shape: []uint64{2, 3}},
		{Name: "a.weight", DType: "BF16", Shape: []uint64{4}},
		{Name: "scalar", DType: "F16", Shape: nil},
	}
	data := [][]byte{bytes.Repeat([]byte{1}, 24), bytes.Repeat([]byte{2}, 8), {3, 4}}
	var buf bytes.Buffer
	if err := Write(&buf, entries, data, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(buf.Bytes()); (8+n)%8 != 0 {
		t.Errorf("data section starts at %d, want a multiple of 8", 8+n)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	want := []Tensor{
		{Name: "b", DType: "F32", Shape: []uint64{2, 3}, Begin: 0, End: 24},
		{Name: "a.weight", DType: "BF16", Shape: []uint64{4}, Begin: 24, End: 32},
		{Name: "scalar", DType: "F16", Shape: []uint64{}, Begin: 32, End: 34},
	}
	if d := cmp.Diff(want, f.Tensors); d != "" {
		t.Errorf("tensors (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"format": "pt"}, f.Metadata); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	for i, e := range entries {
		tt, ok := f.Tensor(e.Name)
		if !ok {
			t.Fatalf("tensor %s not found", e.Name)
		}
		if !bytes.Equal(f.Data(tt), data[i]) {
			t.Errorf("data of %s = %v, want %v", e.Name, f.Data(tt), data[i])
		}
	}
	if _, ok := f.Tensor("missing"); ok {
		t.Error("found a tensor that is not there")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestRelease: releasing tensor data of an opened file keeps it readable
// and unchanged; a parsed file, a foreign slice and a closed file are
// left alone.
func TestRelease(t *testing.T) {
	data := bytes.Repeat([]byte{7, 9}, 3000) // more than a page
	var buf bytes.Buffer
	if err := Write(&buf, []Entry{{Name: "w", DType: "BF16", Shape: []uint64{3000}}}, [][]byte{data}, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tt, _ := f.Tensor("w")
	got := f.Data(tt)
	f.Release(got)
	f.Release(bytes.Repeat([]byte{1}, 8192)) // not the file's: ignored
	if !bytes.Equal(got, data) {
		t.Error("data changed after Release")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f.Release(got) // after Close: ignored, no fault
	p, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pd := p.Data(tt)
	p.Release(pd)
	if !bytes.Equal(pd, data) {
		t.Error("parsed data changed after Release")
	}
}

func TestParseErrors(t *testing.T) {
	d8 := make([]byte, 8)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"too short", []byte{1, 2, 3}, "too short"},
		{"header past the end", append(binary.LittleEndian.AppendUint64(nil, 100), '{', '}'), "does not fit"},
		{"huge header length", binary.LittleEndian.AppendUint64(nil, 1<<63), "does not fit"},
		{"not an object", fileBytes(`[1,2]`, nil), "not a JSON object"},
		{"bad json", fileBytes(`{"a":`, nil), `tensor "a"`},
		{"trailing data", fileBytes(`{} {}`, nil), "after its JSON object"},
		{"duplicate name", fileBytes(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, []byte{0, 0}), `"a" twice`},
		{"missing offsets", fileBytes(`{"a":{"dtype":"F32","shape":[2]}}`, d8), "lacks"},
		{"unknown dtype", fileBytes(`{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}}`, d8), `unknown dtype "Q4"`},
		{"three offsets", fileBytes(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}`, d8), "has 3 values"},
		{"negative shape", fileBytes(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, d8), "tensor \"a\""},
		{"size mismatch", fileBytes(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, d8), "12 bytes) but spans 8"},
		{"past the data", fileBytes(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, d8), "outside the 8-byte data section"},
		{"reversed offsets", fileBytes(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, d8), "spans [8, 0)"},
		{"overflowing shape", fileBytes(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, d8), "overflows"},
		{"overlap", fileBytes(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, d8), `"a" and "b" overlap`},
		{"bad metadata", fileBytes(`{"__metadata__":{"n":1}}`, nil), "__metadata__"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.file)
			if err == nil {
				t.Fatalf("Parse succeeded, want an error containing %q", tc.want)
			}
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want ErrFormat and %q", err, tc.want)
			}
		})
	}
}

func TestWriteRefusesWrongSize(t *testing.T) {
	err := Write(&bytes.Buffer{}, []Entry{{Name: "a", DType: "F32", Shape: []uint64{2}}}, [][]byte{{1, 2, 3}}, nil)
	if err == nil || !strings.Contains(err.Error(), "3 bytes") {
		t.Errorf("Write = %v, want a size error", err)
	}
}

// TestReferenceFiles parses the shipped Hugging Face directories' weights,
// written by an independent writer.
func TestReferenceFiles(t *testing.T) {
	dir := testshared.Require(t, "models", "ref")
	for _, tc := range []struct {
		dir, dtype string
		tensors    int
	}{
		{"tiny-llama.hf", "BF16", 21}, {"tiny-llama3rope.hf", "F32", 20},
		{"tiny-qwen2.hf", "F32", 26}, {"tiny-qwen3.hf", "F32", 24},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			f, err := Open(filepath.Join(dir, tc.dir, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			if len(f.Tensors) != tc.tensors {
				t.Errorf("%d tensors, want %d", len(f.Tensors), tc.tensors)
			}
			e, ok := f.Tensor("model.embed_tokens.weight")
			if !ok {
				t.Fatal("no model.embed_tokens.weight")
			}
			if d := cmp.Diff([]uint64{599, 256}, e.Shape); d != "" || e.DType != tc.dtype {
				t.Errorf("embedding %s %v, want %s [599 256]", e.DType, e.Shape, tc.dtype)
			}
			if d := cmp.Diff(map[string]string{"format": "pt"}, f.Metadata); d != "" {
				t.Errorf("metadata (-want +got):\n%s", d)
			}
		})
	}
}
