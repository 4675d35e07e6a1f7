package kernels

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestDequantRandomBlocks dequantizes blocks of random bytes of every type
// (testdata/random_blocks.json, made by testdata/gen_random_blocks.py with
// llama.cpp's gguf-py) and checks the values bit for bit against gguf-py's
// numpy dequantizers, as one row and as several rows. Random bytes reach
// every quant and packed-scale bit pattern, including those that real
// weights rarely use.
func TestDequantRandomBlocks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "random_blocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Types map[string]struct {
			Type     int    `json:"type"`
			Elements int    `json:"elements"`
			Data     string `json:"data"`
			SHA256   string `json:"sha256"`
		} `json:"types"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	for _, typ := range Types() {
		if typ == F32 || typ == F16 {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			r, ok := ref.Types[typ.String()]
			if !ok || r.Type != int(typ) {
				t.Fatalf("no reference blocks for %v", typ)
			}
			raw, err := base64.StdEncoding.DecodeString(r.Data)
			if err != nil {
				t.Fatal(err)
			}
			for _, rows := range []int{1, 2, 3} {
				w := &Matrix{Rows: rows, Cols: r.Elements / rows, Type: typ, Raw: raw}
				if err := w.Validate(); err != nil {
					t.Fatal(err)
				}
				if got := rowsHash(w); got != r.SHA256 {
					t.Errorf("%d rows: sha256 %s, gguf-py %s", rows, got, r.SHA256)
				}
			}
		})
	}
}

func rowsHash(w *Matrix) string {
	h := sha256.New()
	row := make([]float32, w.Cols)
	buf := make([]byte, 4*w.Cols)
	for r := range w.Rows {
		DequantRow(row, w, r)
		for i, v := range row {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}
