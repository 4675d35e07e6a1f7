package llama

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/kernels"
)

// WriteGGUF writes m as a GGUF v3 file of its architecture (Config.Arch;
// empty means "llama") to w, its matrices stored as typ (F32, F16 or Q8_0;
// norms, biases and rope factors stay F32; a Q8_0 matrix whose rows are not
// whole 32-value blocks is stored as F16). A model whose RoPE pairing is not
// the one GGUF readers assume for its architecture (a Hugging Face llama,
// whose Q/K rows are in half-split order) is refused rather than written
// wrong. extra is called with the Writer before it is written, to add
// metadata such as a vocabulary; it may be nil.
func WriteGGUF(out io.Writer, m *Model, typ kernels.DType, extra func(*gguf.Writer)) error {
	c := m.Config
	arch := c.Arch
	if arch == "" {
		arch = "llama"
	}
	if spec, ok := ggufArchs[arch]; !ok || spec.rope != c.Rope || spec.qkvBias != c.QKVBias || spec.qkNorm != c.QKNorm {
		return fmt.Errorf("llama: write gguf: a %s model with %v RoPE, biases %v, Q/K norm %v is not a GGUF %q layout", arch, c.Rope, c.QKVBias, c.QKNorm, arch)
	}
	if c.Hybrid() && !c.Linear.Tiled {
		return fmt.Errorf("llama: write gguf: a %s model with value heads in Hugging Face order is not the GGUF layout (tiled)", arch)
	}
	t := &tensorWriter{w: gguf.NewWriter(), typ: typ}
	setGGUFConfig(t.w, arch, c)
	names := ggufNames(c)
	t.matrix("token_embd.weight", &m.Embed)
	for i := range m.Layers {
		t.layer(names, &m.Layers[i], fmt.Sprintf("blk.%d.", i), c)
	}
	t.vector("output_norm.weight", m.Norm)
	if m.RopeFactors != nil {
		t.vector("rope_freqs.weight", m.RopeFactors)
	}
	if !m.Tied() {
		t.matrix("output.weight", m.Output)
	}
	if t.err != nil {
		return t.err
	}
	if extra != nil {
		extra(t.w)
	}
	if _, err := t.w.WriteTo(out); err != nil {
		return fmt.Errorf("llama: write gguf: %w", err)
	}
	return nil
}

// tensorWriter adds a model's tensors to a GGUF Writer, its matrices
// stored as typ; the first error stops it.
type tensorWriter struct {
	w   *gguf.Writer
	typ kernels.DType
	err error
}

func (t *tensorWriter) matrix(name string, mat *kernels.Matrix) {
	if t.err != nil {
		return
	}
	data, gt, err := encodeMatrix(mat, t.typ)
	if err != nil {
		t.err = fmt.Errorf("llama: write gguf %s: %w", name, err)
		return
	}
	t.w.AddTensor(name, []uint64{uint64(mat.Cols), uint64(mat.Rows)}, gt, data)
}

func (t *tensorWriter) vector(name string, v []float32) {
	t.w.AddTensor(name, []uint64{uint64(len(v))}, gguf.TypeF32, f32Bytes(v))
}

// layer adds decoder block l under prefix p, named as the loader reads
// them (readLayer, readLinear).
func (t *tensorWriter) layer(n layerNames, l *Layer, p string, c Config) {
	t.vector(p+n.attnNorm+".weight", l.AttnNorm)
	t.vector(p+n.ffnNorm+".weight", l.FFNNorm)
	t.matrix(p+n.gate+".weight", &l.W1)
	t.matrix(p+n.down+".weight", &l.W2)
	t.matrix(p+n.up+".weight", &l.W3)
	if d := l.Lin; d != nil {
		ln := n.lin
		for _, m := range []struct {
			name string
			w    *kernels.Matrix
		}{{ln.qkv, &d.WQKV}, {ln.z, &d.WZ}, {ln.b, &d.WB}, {ln.a, &d.WA}, {ln.out, &d.WOut}} {
			t.matrix(p+m.name, m.w)
		}
		t.w.AddTensor(p+ln.conv, []uint64{uint64(c.Linear.ConvKernel), uint64(c.Linear.ConvDim())}, gguf.TypeF32, f32Bytes(d.Conv))
		t.vector(p+ln.dtBias, d.DtBias)
		t.vector(p+ln.a0, d.A)
		t.vector(p+ln.norm, d.Norm)
		return
	}
	t.matrix(p+n.q+".weight", &l.WQ)
	t.matrix(p+n.k+".weight", &l.WK)
	t.matrix(p+n.v+".weight", &l.WV)
	if c.QKVBias {
		t.vector(p+n.q+".bias", l.BQ)
		t.vector(p+n.k+".bias", l.BK)
		t.vector(p+n.v+".bias", l.BV)
	}
	if c.QKNorm {
		t.vector(p+n.qNorm+".weight", l.QNorm)
		t.vector(p+n.kNorm+".weight", l.KNorm)
	}
	t.matrix(p+n.o+".weight", &l.WO)
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

// setGGUFConfig writes c's metadata keys under arch's prefix.
func setGGUFConfig(w *gguf.Writer, arch string, c Config) {
	w.SetString("general.architecture", arch)
	w.SetUint32(arch+".embedding_length", uint32(c.Dim))
	w.SetUint32(arch+".feed_forward_length", uint32(c.HiddenDim))
	w.SetUint32(arch+".block_count", uint32(c.Layers))
	w.SetUint32(arch+".attention.head_count", uint32(c.Heads))
	w.SetUint32(arch+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetUint32(arch+".context_length", uint32(c.SeqLen))
	w.SetUint32(arch+".rope.dimension_count", uint32(c.RotaryDims()))
	if c.HeadSize != 0 {
		w.SetUint32(arch+".attention.key_length", uint32(c.HeadSize))
		w.SetUint32(arch+".attention.value_length", uint32(c.HeadSize))
	}
	w.SetFloat32(arch+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetFloat32(arch+".rope.freq_base", c.RopeTheta)
	if s := c.Linear; c.Hybrid() {
		w.SetUint32(arch+".full_attention_interval", uint32(c.FullAttnInterval))
		w.SetUint32(arch+".ssm.conv_kernel", uint32(s.ConvKernel))
		w.SetUint32(arch+".ssm.state_size", uint32(s.KeyDim))
		w.SetUint32(arch+".ssm.group_count", uint32(s.KeyHeads))
		w.SetUint32(arch+".ssm.time_step_rank", uint32(s.ValueHeads))
		w.SetUint32(arch+".ssm.inner_size", uint32(s.VDim()))
	}
}
