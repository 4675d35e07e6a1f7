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
	w := gguf.NewWriter()
	setGGUFConfig(w, arch, c)
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
	if c.Hybrid() && !c.Linear.Tiled {
		return fmt.Errorf("llama: write gguf: a %s model with value heads in Hugging Face order is not the GGUF layout (tiled)", arch)
	}
	ffnNorm := "ffn_norm.weight"
	if c.Hybrid() {
		ffnNorm = "post_attention_norm.weight"
	}
	addM("token_embd.weight", &m.Embed)
	for i := range m.Layers {
		l := &m.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		addV(p+"attn_norm.weight", l.AttnNorm)
		addV(p+ffnNorm, l.FFNNorm)
		addM(p+"ffn_gate.weight", &l.W1)
		addM(p+"ffn_down.weight", &l.W2)
		addM(p+"ffn_up.weight", &l.W3)
		if d := l.Lin; d != nil {
			n := ggufLinearNames
			for _, t := range []struct {
				name string
				w    *kernels.Matrix
			}{{n.qkv, &d.WQKV}, {n.z, &d.WZ}, {n.b, &d.WB}, {n.a, &d.WA}, {n.out, &d.WOut}} {
				addM(p+t.name, t.w)
			}
			w.AddTensor(p+n.conv, []uint64{uint64(c.Linear.ConvKernel), uint64(c.Linear.ConvDim())}, gguf.TypeF32, f32Bytes(d.Conv))
			addV(p+n.dtBias, d.DtBias)
			addV(p+n.a0, d.A)
			addV(p+n.norm, d.Norm)
			continue
		}
		addM(p+"attn_q.weight", &l.WQ)
		addM(p+"attn_k.weight", &l.WK)
		addM(p+"attn_v.weight", &l.WV)
		if c.QKVBias {
			addV(p+"attn_q.bias", l.BQ)
			addV(p+"attn_k.bias", l.BK)
			addV(p+"attn_v.bias", l.BV)
		}
		if c.QKNorm {
			addV(p+"attn_q_norm.weight", l.QNorm)
			addV(p+"attn_k_norm.weight", l.KNorm)
		}
		addM(p+"attn_output.weight", &l.WO)
	}
	addV("output_norm.weight", m.Norm)
	if m.RopeFactors != nil {
		addV("rope_freqs.weight", m.RopeFactors)
	}
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
