package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func f32Bytes(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func seq(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// sampleWriter is a small model-like file with F32, F16 and Q8_0 tensors.
func sampleWriter() *Writer {
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.block_count", 1)
	w.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.SetBool("tokenizer.ggml.add_bos_token", true)
	w.SetStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>", "▁hi"})
	w.SetFloat32s("tokenizer.ggml.scores", []float32{0, 0, 0, -1})
	w.SetInt32s("tokenizer.ggml.token_type", []int32{2, 3, 3, 1})
	w.AddTensor("norm.weight", []uint64{3}, TypeF32, f32Bytes(1, 2, 3))
	w.AddTensor("tok_embd.weight", []uint64{2, 2}, TypeF16, seq(8, 1))
	w.AddTensor("blk.0.ffn.weight", []uint64{32, 2}, TypeQ8_0, seq(68, 100))
	return w
}

func TestWriterGolden(t *testing.T) {
	got := encode(t, sampleWriter())
	path := filepath.Join("testdata", "sample.gguf")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("Writer output differs from %s (%d bytes, want %d); rerun with -update if intended", path, len(got), len(want))
	}
}

func TestTensorData(t *testing.T) {
	data := encode(t, sampleWriter())
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || f.Alignment() != 32 || f.DataOffset()%32 != 0 {
		t.Errorf("version %d alignment %d data offset %d", f.Version, f.Alignment(), f.DataOffset())
	}
	tests := []struct {
		name     string
		want     []byte
		wantInfo TensorInfo
	}{
		{"norm.weight", f32Bytes(1, 2, 3), TensorInfo{Name: "norm.weight", Dims: []uint64{3}, Type: TypeF32, Offset: 0}},
		{"tok_embd.weight", seq(8, 1), TensorInfo{Name: "tok_embd.weight", Dims: []uint64{2, 2}, Type: TypeF16, Offset: 32}},
		{"blk.0.ffn.weight", seq(68, 100), TensorInfo{Name: "blk.0.ffn.weight", Dims: []uint64{32, 2}, Type: TypeQ8_0, Offset: 64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := f.Tensor(tt.name)
			if !ok {
				t.Fatalf("Tensor(%q) not found", tt.name)
			}
			if diff := cmp.Diff(tt.wantInfo, *info); diff != "" {
				t.Errorf("info (-want +got):\n%s", diff)
			}
			got, err := f.TensorData(info)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if cap(got) != len(got) {
				t.Errorf("cap %d > len %d: callers could append into the next tensor", cap(got), len(got))
			}
		})
	}
	if _, ok := f.Tensor("missing"); ok {
		t.Error("Tensor(missing) found")
	}
}

func TestTensorDataErrors(t *testing.T) {
	f, err := Parse(encode(t, sampleWriter()))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		info TensorInfo
		want error
	}{
		{"unknown type", TensorInfo{Name: "x", Dims: []uint64{4}, Type: 99}, ErrUnsupportedTensorType},
		{"past end", TensorInfo{Name: "x", Dims: []uint64{1 << 20}, Type: TypeF32}, ErrFormat},
		{"offset past end", TensorInfo{Name: "x", Dims: []uint64{1}, Type: TypeF32, Offset: 1 << 62}, ErrFormat},
		{"partial block", TensorInfo{Name: "x", Dims: []uint64{31}, Type: TypeQ8_0}, ErrFormat},
		{"overflow", TensorInfo{Name: "x", Dims: []uint64{1 << 40, 1 << 40}, Type: TypeF32}, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.TensorData(&tt.info)
			if !errors.Is(err, tt.want) {
				t.Errorf("TensorData = %d bytes, %v; want an error wrapping %v", len(got), err, tt.want)
			}
		})
	}
}

func TestTensorSize(t *testing.T) {
	tests := []struct {
		typ  uint32
		dims []uint64
		want uint64
	}{
		{TypeF32, []uint64{3, 5}, 60},
		{TypeF16, []uint64{7}, 14},
		{TypeQ8_0, []uint64{64, 3}, 2 * 3 * 34},
		{TypeQ4_K, []uint64{256}, 144},
		{TypeBF16, nil, 2},
		{TypeF32, []uint64{0, 9}, 0},
	}
	for _, tt := range tests {
		t.Run(TypeName(tt.typ), func(t *testing.T) {
			got, err := TensorSize(tt.typ, tt.dims)
			if err != nil || got != tt.want {
				t.Errorf("TensorSize(%s, %v) = %d, %v; want %d", TypeName(tt.typ), tt.dims, got, err, tt.want)
			}
		})
	}
}

// openSample opens sampleWriter's file from disk and returns it with its
// norm.weight tensor and that tensor's mapped data.
func openSample(t *testing.T) (*File, *TensorInfo, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, encode(t, sampleWriter()), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.Tensor("norm.weight")
	got, err := f.TensorData(info)
	if err != nil {
		t.Fatal(err)
	}
	return f, info, got
}

func TestOpenAndClose(t *testing.T) {
	f, info, got := openSample(t)
	if diff := cmp.Diff(f32Bytes(1, 2, 3), got); diff != "" {
		t.Errorf("mapped data (-want +got):\n%s", diff)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := f.TensorData(info); !errors.Is(err, ErrClosed) {
		t.Errorf("TensorData after Close: %v, want ErrClosed", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	garbage := filepath.Join(dir, "garbage.gguf")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(garbage, []byte("not a gguf file at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       error
	}{
		{"missing", filepath.Join(dir, "nope.gguf"), os.ErrNotExist},
		{"empty", empty, ErrFormat},
		{"garbage", garbage, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(tt.path)
			if !errors.Is(err, tt.want) {
				t.Errorf("Open = %v, %v; want an error wrapping %v", f, err, tt.want)
			}
		})
	}
}

func TestWriterErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(w *Writer)
	}{
		{"duplicate tensor", func(w *Writer) {
			w.AddTensor("a", []uint64{1}, TypeF32, f32Bytes(1))
			w.AddTensor("a", []uint64{1}, TypeF32, f32Bytes(1))
		}},
		{"short data", func(w *Writer) { w.AddTensor("a", []uint64{2}, TypeF32, f32Bytes(1)) }},
		{"partial block", func(w *Writer) { w.AddTensor("a", []uint64{16}, TypeQ8_0, make([]byte, 17)) }},
		{"too many dims", func(w *Writer) { w.AddTensor("a", []uint64{1, 1, 1, 1, 1}, TypeF32, f32Bytes(1)) }},
		{"bad alignment", func(w *Writer) { w.SetUint32(KeyAlignment, 24) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter()
			tt.build(w)
			var buf bytes.Buffer
			if n, err := w.WriteTo(&buf); err == nil {
				t.Errorf("WriteTo wrote %d bytes, want an error", n)
			}
		})
	}
}

func TestWriterAlignment(t *testing.T) {
	w := NewWriter()
	w.SetUint32(KeyAlignment, 64)
	w.AddTensor("a", []uint64{1}, TypeF32, f32Bytes(1))
	w.AddTensor("b", []uint64{2}, TypeF32, f32Bytes(2, 3))
	w.AddTensor("c", []uint64{5}, 200, seq(5, 0)) // unknown type: written as given
	data := encode(t, w)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var offsets []uint64
	for _, ti := range f.Tensors {
		offsets = append(offsets, ti.Offset)
	}
	if diff := cmp.Diff([]uint64{0, 64, 128}, offsets); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if f.Alignment() != 64 || f.DataOffset()%64 != 0 || len(data)%64 != 0 {
		t.Errorf("alignment %d, data offset %d, file size %d: want multiples of 64", f.Alignment(), f.DataOffset(), len(data))
	}
	c, _ := f.Tensor("c")
	if _, err := f.TensorData(c); !errors.Is(err, ErrUnsupportedTensorType) {
		t.Errorf("TensorData(unknown type) = %v, want ErrUnsupportedTensorType", err)
	}
}

// TestRelease: releasing tensor data of an opened file keeps it readable
// and unchanged; a parsed file, a foreign slice and a closed file are
// left alone.
func TestRelease(t *testing.T) {
	f, info, got := openSample(t)
	f.Release(got)
	f.Release(f32Bytes(4, 5)) // not the file's: ignored
	if diff := cmp.Diff(f32Bytes(1, 2, 3), got); diff != "" {
		t.Errorf("data after Release (-want +got):\n%s", diff)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f.Release(got) // after Close: ignored, no fault
	p, err := Parse(encode(t, sampleWriter()))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := p.TensorData(info)
	p.Release(data)
	if diff := cmp.Diff(f32Bytes(1, 2, 3), data); diff != "" {
		t.Errorf("parsed data after Release (-want +got):\n%s", diff)
	}
}
