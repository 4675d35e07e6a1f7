package gguf

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseVocab parses the gpt-2 vocabulary file (50k tokens, 50k
// merges): the cost of loading a tokenizer's metadata.
func BenchmarkParseVocab(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(sharedDir(b), "tokenizers", "gguf", "ggml-vocab-gpt-2.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTensorData(b *testing.B) {
	f, err := Parse(encode(b, sampleWriter()))
	if err != nil {
		b.Fatal(err)
	}
	ti, _ := f.Tensor("blk.0.ffn.weight")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.TensorData(ti); err != nil {
			b.Fatal(err)
		}
	}
}
