package llama

import "github.com/kiln-ai/kiln/kernels"

// matrixType maps a GGUF tensor type (ggml_type) to the kernels type that
// holds it without conversion: kernels numbers its types as ggml does, so
// every type kernels supports is accepted and stays in its file layout.
func matrixType(ggmlType uint32) (kernels.DType, bool) {
	if ggmlType > 255 {
		return 0, false
	}
	t := kernels.DType(ggmlType)
	_, _, ok := t.Block()
	return t, ok
}
