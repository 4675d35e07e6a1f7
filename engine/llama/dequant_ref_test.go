package llama

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/kernels"
)

// refTensorHash is one entry of testdata/dequant_sha256.json: the sha256 of
// a tensor's values dequantized by llama.cpp's gguf-py, as float32
// little-endian bytes in row-major order.
type refTensorHash struct {
	Type     string `json:"type"`
	Elements int    `json:"elements"`
	SHA256   string `json:"sha256"`
}

// TestDequantMatchesReference dequantizes every non-F32 tensor of every
// reference GGUF with kernels.DequantRow and checks that the values are
// bit for bit those of gguf-py's numpy dequantizers (which the reference
// README says equal ggml's dequantize_row_*). testdata/gen_dequant_sha256.py
// made the hashes.
func TestDequantMatchesReference(t *testing.T) {
	dir := testshared.Require(t, "models", "ref")
	data, err := os.ReadFile(filepath.Join("testdata", "dequant_sha256.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Files map[string]map[string]refTensorHash `json:"files"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, file := range sortedKeys(ref.Files) {
		t.Run(file, func(t *testing.T) {
			f, err := gguf.Open(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := f.Close(); err != nil {
					t.Error(err)
				}
			})
			for _, name := range sortedKeys(ref.Files[file]) {
				want := ref.Files[file][name]
				w := refMatrix(t, f, name)
				if w.Type.String() != want.Type || w.Rows*w.Cols != want.Elements {
					t.Fatalf("%s: %v %dx%d, reference %s of %d values", name, w.Type, w.Rows, w.Cols, want.Type, want.Elements)
				}
				if got := dequantHash(w); got != want.SHA256 {
					t.Errorf("%s (%v): dequantized sha256 %s, reference %s", name, w.Type, got, want.SHA256)
				}
				seen[want.Type]++
			}
		})
	}
	t.Logf("tensors checked per type: %v", seen)
	for _, typ := range []string{"F16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"} {
		if seen[typ] == 0 {
			t.Errorf("no reference tensor of type %s was checked", typ)
		}
	}
}

// refMatrix is the 2-D tensor name of f as a kernels.Matrix aliasing the file.
func refMatrix(tb testing.TB, f *gguf.File, name string) *kernels.Matrix {
	tb.Helper()
	ti, ok := f.Tensor(name)
	if !ok || len(ti.Dims) != 2 {
		tb.Fatalf("tensor %s missing or not 2-D", name)
	}
	typ, ok := matrixType(ti.Type)
	if !ok {
		tb.Fatalf("tensor %s: type %s not supported", name, gguf.TypeName(ti.Type))
	}
	raw, err := f.TensorData(ti)
	if err != nil {
		tb.Fatal(err)
	}
	w := &kernels.Matrix{Rows: int(ti.Dims[1]), Cols: int(ti.Dims[0]), Type: typ, Raw: raw}
	if err := w.Validate(); err != nil {
		tb.Fatalf("tensor %s: %v", name, err)
	}
	return w
}

// dequantHash is the sha256 of w's rows dequantized with kernels.DequantRow,
// as float32 little-endian bytes.
func dequantHash(w *kernels.Matrix) string {
	h := sha256.New()
	row := make([]float32, w.Cols)
	buf := make([]byte, 4*w.Cols)
	for r := range w.Rows {
		kernels.DequantRow(row, w, r)
		for i, v := range row {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
