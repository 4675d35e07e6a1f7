package llama

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kiln-ai/kiln/kernels"
)

// archSpec is what distinguishes one supported architecture's computation.
type archSpec struct {
	rope    RopeStyle // pairing of GGUF-layout Q/K rows
	qkvBias bool
	qkNorm  bool
	hybrid  bool // Gated DeltaNet layers between gated attention layers (hybrid.go)
}

// ggufArchs are the GGUF general.architecture values this engine runs.
var ggufArchs = map[string]archSpec{
	"llama":  {rope: RopeNorm},
	"qwen2":  {rope: RopeNeoX, qkvBias: true},
	"qwen3":  {rope: RopeNeoX, qkNorm: true},
	"qwen35": {rope: RopeNeoX, qkNorm: true, hybrid: true},
}

// hfArchs maps a Hugging Face config.json "architectures" entry to the GGUF
// name of the same computation. Hugging Face keeps Q/K rows in half-split
// order for every one of them, so all run with RopeNeoX.
var hfArchs = map[string]string{
	"LlamaForCausalLM": "llama",
	"Qwen2ForCausalLM": "qwen2",
	"Qwen3ForCausalLM": "qwen3",
	// Qwen3.5: the text model of the vision-language checkpoints people
	// download, and the text-only class.
	"Qwen3_5ForConditionalGeneration": "qwen35",
	"Qwen3_5ForCausalLM":              "qwen35",
}

// supportedList names the keys of m, sorted, for error messages.
func supportedList[V any](m map[string]V) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// SupportedTypes lists the weight types the loaders accept, for error
// messages: every type of kernels.Types, in ggml_type order, so that a
// type added there needs no entry here.
var SupportedTypes = typeNames(kernels.Types())

func typeNames(ts []kernels.DType) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// UnsupportedTypeError is a tensor whose storage type the engine cannot
// run. It wraps ErrFormat, so callers that only check ErrFormat still see a
// bad file; tests use it to skip reference cases of types not yet
// implemented.
type UnsupportedTypeError struct {
	Tensor string // the tensor's name in the file
	Type   string // the file's name for its type, such as "Q4_K" or "BF16"
}

func (e *UnsupportedTypeError) Error() string {
	return fmt.Sprintf("%v: tensor %s has type %s; supported: %s", ErrFormat, e.Tensor, e.Type, SupportedTypes)
}

// Unwrap makes errors.Is(err, ErrFormat) hold.
func (e *UnsupportedTypeError) Unwrap() error { return ErrFormat }

// IsUnsupportedType reports whether err is (or wraps) an
// UnsupportedTypeError.
func IsUnsupportedType(err error) bool {
	var u *UnsupportedTypeError
	return errors.As(err, &u)
}
