package llama

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/kernels"
)

// DefaultMaxSeqLen caps the context of a GGUF model whose
// llama.context_length is larger, to bound the KV cache of a slot.
const DefaultMaxSeqLen = 4096

// littleEndian reports whether the host stores float32 as GGUF does, so
// F32 tensors can alias the file instead of being copied.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// FromGGUF builds a model from a GGUF file of architecture llama (with
// Llama 3's rope_freqs when present), qwen2 or qwen3 whose tensors are of a
// type in SupportedTypes. The weights alias f's data, so f must stay open
// while the model is used; the model does not close f. maxSeqLen caps the
// context length (0 means DefaultMaxSeqLen).
func FromGGUF(f *gguf.File, maxSeqLen int) (*Model, error) {
	c, err := ggufConfig(f, maxSeqLen)
	if err != nil {
		return nil, err
	}
	g := &ggufLoader{f: f, used: map[string]bool{}}
	m := &Model{Config: c, Layers: make([]Layer, c.Layers)}
	if v, ok := f.Uint(c.Arch + ".context_length"); ok && v <= maxDim {
		m.ownSeqLen = int(v)
	}
	if m.Embed, err = g.matrix("token_embd.weight", c.Vocab, c.Dim); err != nil {
		return nil, err
	}
	names := ggufNames(c)
	for i := range m.Layers {
		if err := readLayer(g, names, &m.Layers[i], i, fmt.Sprintf("blk.%d.", i), c); err != nil {
			return nil, err
		}
	}
	if m.Norm, err = g.vector("output_norm.weight", c.Dim); err != nil {
		return nil, err
	}
	if _, ok := f.Tensor("output.weight"); ok {
		out, err := g.matrix("output.weight", c.Vocab, c.Dim)
		if err != nil {
			return nil, err
		}
		m.Output = &out
	} else {
		m.Output = &m.Embed
	}
	if _, ok := f.Tensor("rope_freqs.weight"); ok {
		if m.RopeFactors, err = g.vector("rope_freqs.weight", c.HeadDim()/2); err != nil {
			return nil, err
		}
	}
	if c.Hybrid() {
		if s := ggufSkipped(f, g, c.Layers); s != "" {
			m.Skipped = append(m.Skipped, s)
		}
	}
	for _, t := range f.Tensors {
		if !g.used[t.Name] {
			return nil, fmt.Errorf("%w: gguf tensor %s is not part of the %s architecture this engine runs", ErrFormat, t.Name, c.Arch)
		}
	}
	// A packed matrix's products read the packed copy: its row-major bytes
	// need not stay resident beside it (the embedding lookup of a tied
	// classifier reads a row's pages back from the page cache).
	if err := m.finish(f.Release); err != nil {
		return nil, err
	}
	return m, nil
}

// ggufLoader reads tensors of one file, remembering which it used so that
// stray tensors (an architecture feature this engine would ignore) are
// refused.
type ggufLoader struct {
	f    *gguf.File
	used map[string]bool
}

// matrix reads a rows x cols weight matrix (GGUF dims [cols, rows]),
// aliasing the file's bytes.
func (g *ggufLoader) matrix(name string, rows, cols int) (kernels.Matrix, error) {
	g.used[name] = true
	t, ok := g.f.Tensor(name)
	if !ok {
		return kernels.Matrix{}, fmt.Errorf("%w: gguf tensor %s missing", ErrFormat, name)
	}
	if len(t.Dims) != 2 || t.Dims[0] != uint64(cols) || t.Dims[1] != uint64(rows) {
		return kernels.Matrix{}, fmt.Errorf("%w: gguf tensor %s has shape %v, want [%d %d]", ErrFormat, name, t.Dims, cols, rows)
	}
	data, err := g.f.TensorData(t)
	if err != nil {
		return kernels.Matrix{}, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	w := kernels.Matrix{Rows: rows, Cols: cols}
	typ, ok := matrixType(t.Type)
	switch {
	case !ok:
		return kernels.Matrix{}, &UnsupportedTypeError{Tensor: name, Type: gguf.TypeName(t.Type)}
	case typ == kernels.F32:
		w.Type, w.F32 = kernels.F32, floats(data)
	default:
		w.Type, w.Raw = typ, data
	}
	if err := w.Validate(); err != nil {
		return kernels.Matrix{}, fmt.Errorf("%w: gguf tensor %s: %w", ErrFormat, name, err)
	}
	return w, nil
}

// vector reads a one-dimensional tensor of n values (norms, biases, rotary
// factors) as float32.
func (g *ggufLoader) vector(name string, n int) ([]float32, error) { return g.array(name, n) }

// array reads a tensor of the given row-major shape (GGUF ne reversed) as
// float32.
func (g *ggufLoader) array(name string, shape ...int) ([]float32, error) {
	g.used[name] = true
	t, ok := g.f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("%w: gguf tensor %s missing", ErrFormat, name)
	}
	want := make([]uint64, len(shape))
	n := 1
	for i, d := range shape {
		want[len(shape)-1-i] = uint64(d)
		n *= d
	}
	if !slices.Equal(t.Dims, want) {
		return nil, fmt.Errorf("%w: gguf tensor %s has shape %v, want %v", ErrFormat, name, t.Dims, want)
	}
	data, err := g.f.TensorData(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	switch t.Type {
	case gguf.TypeF32:
		return floats(data), nil
	case gguf.TypeF16:
		v := make([]float32, n)
		for i := range v {
			v[i] = kernels.HalfToFloat(binary.LittleEndian.Uint16(data[2*i:]))
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: gguf vector tensor %s has type %s; supported: F32, F16", ErrFormat, name, gguf.TypeName(t.Type))
}

// floats views little-endian float32 data as []float32, aliasing it when the
// host and the alignment allow, copying otherwise.
func floats(data []byte) []float32 {
	n := len(data) / 4
	if n == 0 {
		return []float32{}
	}
	if littleEndian && uintptr(unsafe.Pointer(&data[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}
