package llama

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
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

// FromGGUF builds a model from a GGUF file of architecture "llama" whose
// matrices are of any type kernels supports (F32, F16, BF16, Q8_0, the
// legacy 4/5-bit and the K-quant types; see matrixType). The weights alias f's data, so f must stay
// open while the model is used; the model does not close f. maxSeqLen caps
// the context length (0 means DefaultMaxSeqLen).
func FromGGUF(f *gguf.File, maxSeqLen int) (*Model, error) {
	if maxSeqLen <= 0 {
		maxSeqLen = DefaultMaxSeqLen
	}
	if arch, _ := f.String("general.architecture"); arch != "llama" {
		return nil, fmt.Errorf("%w: gguf general.architecture %q, want \"llama\"", ErrFormat, arch)
	}
	need := func(key string) (int, error) {
		v, ok := f.Uint(key)
		if !ok {
			return 0, fmt.Errorf("%w: gguf metadata %s missing or not a non-negative integer", ErrFormat, key)
		}
		if v == 0 || v > maxDim {
			return 0, fmt.Errorf("%w: gguf metadata %s = %d out of range [1, %d]", ErrFormat, key, v, maxDim)
		}
		return int(v), nil
	}
	var c Config
	var err error
	for _, k := range []struct {
		key string
		dst *int
	}{
		{"llama.embedding_length", &c.Dim},
		{"llama.feed_forward_length", &c.HiddenDim},
		{"llama.block_count", &c.Layers},
		{"llama.attention.head_count", &c.Heads},
		{"llama.context_length", &c.SeqLen},
	} {
		if *k.dst, err = need(k.key); err != nil {
			return nil, err
		}
	}
	c.KVHeads = c.Heads
	if _, ok := f.Value("llama.attention.head_count_kv"); ok {
		if c.KVHeads, err = need("llama.attention.head_count_kv"); err != nil {
			return nil, err
		}
	}
	c.SeqLen = min(c.SeqLen, maxSeqLen)
	if v, ok := f.Float("llama.attention.layer_norm_rms_epsilon"); ok {
		c.NormEps = float32(v)
	}
	if v, ok := f.Float("llama.rope.freq_base"); ok {
		c.RopeTheta = float32(v)
	}
	if s, ok := f.String("llama.rope.scaling.type"); ok && s != "none" {
		return nil, fmt.Errorf("%w: gguf llama.rope.scaling.type %q is not supported", ErrFormat, s)
	}
	if _, ok := f.Tensor("rope_freqs.weight"); ok {
		return nil, fmt.Errorf("%w: gguf tensor rope_freqs.weight (scaled rotary frequencies) is not supported", ErrFormat)
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("%w: gguf tensor token_embd.weight missing", ErrFormat)
	}
	if len(emb.Dims) != 2 || emb.Dims[1] == 0 || emb.Dims[1] > maxDim {
		return nil, fmt.Errorf("%w: gguf token_embd.weight has shape %v, want [%d, vocab]", ErrFormat, emb.Dims, c.Dim)
	}
	c.Vocab = int(emb.Dims[1])
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("gguf llama metadata: %w", err)
	}
	if n, ok := f.Uint("llama.rope.dimension_count"); ok && n != uint64(c.HeadDim()) {
		return nil, fmt.Errorf("%w: gguf llama.rope.dimension_count %d, want the head size %d (partial rotary is not supported)", ErrFormat, n, c.HeadDim())
	}

	used := map[string]bool{}
	matrix := func(name string, rows, cols int) (kernels.Matrix, error) {
		used[name] = true
		t, ok := f.Tensor(name)
		if !ok {
			return kernels.Matrix{}, fmt.Errorf("%w: gguf tensor %s missing", ErrFormat, name)
		}
		if len(t.Dims) != 2 || t.Dims[0] != uint64(cols) || t.Dims[1] != uint64(rows) {
			return kernels.Matrix{}, fmt.Errorf("%w: gguf tensor %s has shape %v, want [%d %d]", ErrFormat, name, t.Dims, cols, rows)
		}
		data, err := f.TensorData(t)
		if err != nil {
			return kernels.Matrix{}, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		w := kernels.Matrix{Rows: rows, Cols: cols}
		typ, ok := matrixType(t.Type)
		switch {
		case !ok:
			return kernels.Matrix{}, fmt.Errorf("%w: gguf tensor %s has type %s; supported: %s", ErrFormat, name, gguf.TypeName(t.Type), supportedTypes())
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
	vector := func(name string) ([]float32, error) {
		used[name] = true
		t, ok := f.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("%w: gguf tensor %s missing", ErrFormat, name)
		}
		if len(t.Dims) != 1 || t.Dims[0] != uint64(c.Dim) {
			return nil, fmt.Errorf("%w: gguf tensor %s has shape %v, want [%d]", ErrFormat, name, t.Dims, c.Dim)
		}
		data, err := f.TensorData(t)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		switch t.Type {
		case gguf.TypeF32:
			return floats(data), nil
		case gguf.TypeF16:
			v := make([]float32, c.Dim)
			for i := range v {
				v[i] = kernels.HalfToFloat(binary.LittleEndian.Uint16(data[2*i:]))
			}
			return v, nil
		}
		return nil, fmt.Errorf("%w: gguf norm tensor %s has type %s; supported: F32, F16", ErrFormat, name, gguf.TypeName(t.Type))
	}

	d, kv, h := c.Dim, c.KVDim(), c.HiddenDim
	m := &Model{Config: c, Layers: make([]Layer, c.Layers)}
	if m.Embed, err = matrix("token_embd.weight", c.Vocab, d); err != nil {
		return nil, err
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		for _, t := range []struct {
			name       string
			dst        *kernels.Matrix
			rows, cols int
		}{
			{"attn_q", &l.WQ, d, d}, {"attn_k", &l.WK, kv, d}, {"attn_v", &l.WV, kv, d},
			{"attn_output", &l.WO, d, d}, {"ffn_gate", &l.W1, h, d},
			{"ffn_down", &l.W2, d, h}, {"ffn_up", &l.W3, h, d},
		} {
			if *t.dst, err = matrix(p+t.name+".weight", t.rows, t.cols); err != nil {
				return nil, err
			}
		}
		if l.AttnNorm, err = vector(p + "attn_norm.weight"); err != nil {
			return nil, err
		}
		if l.FFNNorm, err = vector(p + "ffn_norm.weight"); err != nil {
			return nil, err
		}
	}
	if m.Norm, err = vector("output_norm.weight"); err != nil {
		return nil, err
	}
	if _, ok := f.Tensor("output.weight"); ok {
		out, err := matrix("output.weight", c.Vocab, d)
		if err != nil {
			return nil, err
		}
		m.Output = &out
	} else {
		m.Output = &m.Embed
	}
	for _, t := range f.Tensors {
		if !used[t.Name] {
			return nil, fmt.Errorf("%w: gguf tensor %s is not part of the llama architecture this engine runs", ErrFormat, t.Name)
		}
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
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

// WriteGGUF writes m as a GGUF v3 file of architecture "llama" to w, its
// matrices stored as typ (F32, F16 or Q8_0; norms stay F32; a Q8_0 matrix
// whose rows are not whole 32-value blocks is stored as F16). extra is called
// with the Writer before it is written, to add metadata such as a
// vocabulary; it may be nil.
func WriteGGUF(out io.Writer, m *Model, typ kernels.DType, extra func(*gguf.Writer)) error {
	c := m.Config
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.embedding_length", uint32(c.Dim))
	w.SetUint32("llama.feed_forward_length", uint32(c.HiddenDim))
	w.SetUint32("llama.block_count", uint32(c.Layers))
	w.SetUint32("llama.attention.head_count", uint32(c.Heads))
	w.SetUint32("llama.attention.head_count_kv", uint32(c.KVHeads))
	w.SetUint32("llama.context_length", uint32(c.SeqLen))
	w.SetUint32("llama.rope.dimension_count", uint32(c.HeadDim()))
	w.SetFloat32("llama.attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetFloat32("llama.rope.freq_base", c.RopeTheta)
	var err error
	addM := func(name string, mat *kernels.Matrix) {
		if err != nil {
			return
		}
		var data []byte
		var gt uint32
		data, gt, err = encodeMatrix(mat, typ)
		if err != nil {
			err = fmt.Errorf("llama: write gguf %s: %w", name, err)
			return
		}
		w.AddTensor(name, []uint64{uint64(mat.Cols), uint64(mat.Rows)}, gt, data)
	}
	addV := func(name string, v []float32) {
		w.AddTensor(name, []uint64{uint64(len(v))}, gguf.TypeF32, f32Bytes(v))
	}
	addM("token_embd.weight", &m.Embed)
	for i := range m.Layers {
		l := &m.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		addV(p+"attn_norm.weight", l.AttnNorm)
		addM(p+"attn_q.weight", &l.WQ)
		addM(p+"attn_k.weight", &l.WK)
		addM(p+"attn_v.weight", &l.WV)
		addM(p+"attn_output.weight", &l.WO)
		addV(p+"ffn_norm.weight", l.FFNNorm)
		addM(p+"ffn_gate.weight", &l.W1)
		addM(p+"ffn_down.weight", &l.W2)
		addM(p+"ffn_up.weight", &l.W3)
	}
	addV("output_norm.weight", m.Norm)
	if !m.Tied() {
		addM("output.weight", m.Output)
	}
	if err != nil {
		return err
	}
	if extra != nil {
		extra(w)
	}
	if _, err := w.WriteTo(out); err != nil {
		return fmt.Errorf("llama: write gguf: %w", err)
	}
	return nil
}

// encodeMatrix converts an F32 matrix to the bytes of a GGUF tensor of typ.
func encodeMatrix(w *kernels.Matrix, typ kernels.DType) ([]byte, uint32, error) {
	if w.Type != kernels.F32 {
		if w.Type == typ {
			return w.Raw, uint32(typ), nil
		}
		return nil, 0, fmt.Errorf("cannot convert %v to %v", w.Type, typ)
	}
	switch typ {
	case kernels.F32:
		return f32Bytes(w.F32), gguf.TypeF32, nil
	case kernels.F16:
		b := make([]byte, 0, 2*len(w.F32))
		for _, v := range w.F32 {
			b = binary.LittleEndian.AppendUint16(b, kernels.FloatToHalf(v))
		}
		return b, gguf.TypeF16, nil
	case kernels.Q8_0:
		if w.Cols%kernels.Q8Block != 0 {
			// As llama.cpp's quantiser does, keep a matrix whose rows are
			// not whole blocks in F16.
			return encodeMatrix(w, kernels.F16)
		}
		return kernels.QuantizeQ8(nil, w.F32), gguf.TypeQ8_0, nil
	}
	return nil, 0, fmt.Errorf("unsupported type %v", typ)
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}
