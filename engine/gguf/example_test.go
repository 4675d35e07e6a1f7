package gguf_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// A model loader reads hyperparameters and tensor bytes; here the file is
// built in memory with a Writer.
func Example() {
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.embedding_length", 2)
	w.SetStrings("tokenizer.ggml.tokens", []string{"<s>", "</s>", "hi"})
	w.AddTensor("output_norm.weight", []uint64{2}, gguf.TypeF32, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		fmt.Println(err)
		return
	}

	f, err := gguf.Parse(buf.Bytes()) // gguf.Open(path) maps a file instead
	if err != nil {
		fmt.Println(err)
		return
	}
	arch, _ := f.String("general.architecture")
	dim, _ := f.Uint(arch + ".embedding_length")
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	norm, _ := f.Tensor("output_norm.weight")
	data, err := f.TensorData(norm)
	fmt.Println(arch, dim, len(tokens), gguf.TypeName(norm.Type), norm.Dims, len(data), err)
	// Output: llama 2 3 F32 [2] 8 <nil>
}

func ExampleFile_Describe() {
	w := gguf.NewWriter()
	w.SetString("general.name", "tiny")
	w.SetInt32s("tokenizer.ggml.token_type", []int32{3, 3, 1})
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		fmt.Println(err)
		return
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := f.Describe(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// GGUF v3: 2 metadata entries, 0 tensors, alignment 32, data at offset 121
	// metadata:
	//   general.name               string    "tiny"
	//   tokenizer.ggml.token_type  [3]int32  [3, 3, 1]
}
