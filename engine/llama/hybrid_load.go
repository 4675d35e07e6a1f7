package llama

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/kernels"
)

// linearNames are the names of a Gated DeltaNet mixer's tensors relative
// to its layer's prefix, in full (GGUF's A has no ".weight" suffix, nor
// Hugging Face's A_log and dt_bias).
type linearNames struct {
	qkv, z, b, a, out, conv, dtBias, a0, norm string
	conv3D                                    bool // conv1d is [channels, 1, taps] (Hugging Face) rather than [channels, taps]
	aLog                                      bool // a0 holds log(−A) (Hugging Face's A_log) rather than A (GGUF's ssm_a)
}

var (
	ggufLinearNames = linearNames{
		qkv: "attn_qkv.weight", z: "attn_gate.weight", b: "ssm_beta.weight", a: "ssm_alpha.weight",
		out: "ssm_out.weight", conv: "ssm_conv1d.weight", dtBias: "ssm_dt.bias", a0: "ssm_a", norm: "ssm_norm.weight",
	}
	hfLinearNames = linearNames{
		qkv: "linear_attn.in_proj_qkv.weight", z: "linear_attn.in_proj_z.weight", b: "linear_attn.in_proj_b.weight",
		a: "linear_attn.in_proj_a.weight", out: "linear_attn.out_proj.weight", conv: "linear_attn.conv1d.weight",
		dtBias: "linear_attn.dt_bias", a0: "linear_attn.A_log", norm: "linear_attn.norm.weight",
		conv3D: true, aLog: true,
	}
)

// readLinear reads the Gated DeltaNet mixer of the layer with prefix p.
func readLinear(src tensorSource, n linearNames, p string, c Config) (*DeltaNet, error) {
	s := c.Linear
	d := &DeltaNet{}
	var err error
	for _, t := range []struct {
		name       string
		dst        *kernels.Matrix
		rows, cols int
	}{
		{n.qkv, &d.WQKV, s.ConvDim(), c.Dim}, {n.z, &d.WZ, s.VDim(), c.Dim}, {n.b, &d.WB, s.ValueHeads, c.Dim},
		{n.a, &d.WA, s.ValueHeads, c.Dim}, {n.out, &d.WOut, c.Dim, s.VDim()},
	} {
		if *t.dst, err = src.matrix(p+t.name, t.rows, t.cols); err != nil {
			return nil, err
		}
	}
	conv := []int{s.ConvDim(), s.ConvKernel}
	if n.conv3D {
		conv = []int{s.ConvDim(), 1, s.ConvKernel}
	}
	if d.Conv, err = src.array(p+n.conv, conv...); err != nil {
		return nil, err
	}
	if d.DtBias, err = src.vector(p+n.dtBias, s.ValueHeads); err != nil {
		return nil, err
	}
	if d.A, err = src.vector(p+n.a0, s.ValueHeads); err != nil {
		return nil, err
	}
	if n.aLog {
		a := make([]float32, len(d.A)) // the loader's vector may alias the file
		for i, v := range d.A {
			a[i] = float32(-math.Exp(float64(v)))
		}
		d.A = a
	}
	if d.Norm, err = src.vector(p+n.norm, s.ValueDim); err != nil {
		return nil, err
	}
	return d, nil
}

// ggufHybrid reads a qwen35 file's hybrid keys into c: the layers less the
// multi-token-prediction blocks counted in block_count, the Gated DeltaNet
// shape (ssm.*), the interval of full-attention layers and the partial
// rotary; the query projection always carries its gate.
func ggufHybrid(g ggufMeta, c *Config) error {
	mtp := 0
	if v, ok := g.f.Uint(g.key("nextn_predict_layers")); ok {
		if v >= uint64(c.Layers) {
			return fmt.Errorf("%w: gguf %s.nextn_predict_layers %d leaves no layer of %d", ErrFormat, c.Arch, v, c.Layers)
		}
		mtp = int(v)
	}
	c.Layers -= mtp
	s := &c.Linear
	var inner int
	if err := g.needAll(
		ggufInt{"full_attention_interval", &c.FullAttnInterval}, ggufInt{"ssm.conv_kernel", &s.ConvKernel},
		ggufInt{"ssm.state_size", &s.KeyDim}, ggufInt{"ssm.group_count", &s.KeyHeads}, ggufInt{"ssm.time_step_rank", &s.ValueHeads},
		ggufInt{"rope.dimension_count", &c.RotaryDim}, ggufInt{"ssm.inner_size", &inner},
	); err != nil {
		return err
	}
	if inner%s.ValueHeads != 0 {
		return fmt.Errorf("%w: gguf %s.ssm.inner_size %d not a multiple of ssm.time_step_rank %d", ErrFormat, c.Arch, inner, s.ValueHeads)
	}
	s.ValueDim, s.Tiled, c.AttnGate = inner/s.ValueHeads, true, true
	return nil
}

// ggufSkipped marks the tensors of the multi-token-prediction blocks
// (blk.N.* for N at or past the layers the model runs) used, and says what
// was skipped ("" when nothing).
func ggufSkipped(f *gguf.File, g *ggufLoader, layers int) string {
	n := 0
	for _, t := range f.Tensors {
		var b int
		if _, err := fmt.Sscanf(t.Name, "blk.%d.", &b); err == nil && b >= layers {
			g.used[t.Name] = true
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d tensors of the multi-token-prediction block (never run)", n)
}

// hfQwen35 is the part of a Qwen3.5 config.json's text settings beyond a
// plain decoder's.
type hfQwen35 struct {
	LayerTypes       []string `json:"layer_types"`
	FullAttnInterval int      `json:"full_attention_interval"`
	AttnOutputGate   *bool    `json:"attn_output_gate"`
	ConvKernel       int      `json:"linear_conv_kernel_dim"`
	KeyDim           int      `json:"linear_key_head_dim"`
	KeyHeads         int      `json:"linear_num_key_heads"`
	ValueHeads       int      `json:"linear_num_value_heads"`
	ValueDim         int      `json:"linear_value_head_dim"`
	MLPOnlyLayers    []int    `json:"mlp_only_layers"`
	NumExperts       int      `json:"num_experts"`
	RopeParameters   *struct {
		RopeType            string  `json:"rope_type"`
		RopeTheta           float64 `json:"rope_theta"`
		PartialRotaryFactor float64 `json:"partial_rotary_factor"`
	} `json:"rope_parameters"`
}

// hfTextConfig returns the text model's settings of config.json: the
// nested text_config of a vision-language checkpoint (whose text weights
// sit under model.language_model.), or the file itself.
func hfTextConfig(data []byte) (text []byte, prefix string, err error) {
	var top struct {
		TextConfig json.RawMessage `json:"text_config"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, "", fmt.Errorf("%w: config.json: %w", ErrFormat, err)
	}
	if len(top.TextConfig) == 0 || string(top.TextConfig) == "null" {
		return data, "model.", nil
	}
	return top.TextConfig, "model.language_model.", nil
}

// applyQwen35 fills c's hybrid fields from the text settings of a Qwen3.5
// config.json, refusing the variants this engine would compute wrong
// (mixture of experts, layer types out of the interval's pattern).
func applyQwen35(text []byte, c *Config) error {
	var q hfQwen35
	if err := json.Unmarshal(text, &q); err != nil {
		return fmt.Errorf("%w: config.json: %w", ErrFormat, err)
	}
	if q.NumExperts > 0 || len(q.MLPOnlyLayers) > 0 {
		return fmt.Errorf("%w: config.json: Qwen3.5 mixture-of-experts models are not supported", ErrFormat)
	}
	c.FullAttnInterval = q.FullAttnInterval
	c.Linear = LinearShape{KeyHeads: q.KeyHeads, ValueHeads: q.ValueHeads, KeyDim: q.KeyDim, ValueDim: q.ValueDim, ConvKernel: q.ConvKernel}
	c.AttnGate = q.AttnOutputGate == nil || *q.AttnOutputGate
	if rp := q.RopeParameters; rp != nil {
		if rp.RopeType != "" && rp.RopeType != "default" {
			return fmt.Errorf("%w: config.json rope_parameters rope_type %q is not supported (default only)", ErrFormat, rp.RopeType)
		}
		c.RopeTheta = float32(rp.RopeTheta)
		if f := rp.PartialRotaryFactor; f > 0 && f < 1 {
			c.RotaryDim = int(float64(c.HeadDim()) * f)
		}
	}
	if len(q.LayerTypes) > 0 {
		if len(q.LayerTypes) != c.Layers {
			return fmt.Errorf("%w: config.json layer_types has %d entries for %d layers", ErrFormat, len(q.LayerTypes), c.Layers)
		}
		for i, t := range q.LayerTypes {
			want := "full_attention"
			if c.IsLinear(i) {
				want = "linear_attention"
			}
			if t != want {
				return fmt.Errorf("%w: config.json layer_types[%d] is %q, want %q (full attention every %d layers)", ErrFormat, i, t, want, c.FullAttnInterval)
			}
		}
	}
	return nil
}

// hfSkipped marks the tensors a Qwen3.5 checkpoint carries beside its text
// model used (the vision tower, the multi-token-prediction layer) and says
// what was skipped.
func (h *hfTensors) hfSkipped() []string {
	var out []string
	for _, g := range []struct{ prefix, what string }{
		{"model.visual.", "of the vision tower"}, {"mtp.", "of the multi-token-prediction layer (never run)"},
	} {
		n := 0
		for name := range h.byName {
			if strings.HasPrefix(name, g.prefix) {
				h.used[name] = true
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d tensors %s", n, g.what))
		}
	}
	return out
}

// centreNorms turns the zero-centred RMSNorm weights of a Hugging Face
// Qwen3.5 checkpoint (the norm multiplies by 1+w) into the plain
// multipliers the forward pass and GGUF files use. The gated norm of the
// Gated DeltaNet layers is plain already. The loader's vectors may alias
// the file, so each is copied.
func (m *Model) centreNorms() {
	plus1 := func(v []float32) []float32 {
		if v == nil {
			return nil
		}
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = 1 + x
		}
		return out
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		l.AttnNorm, l.FFNNorm, l.QNorm, l.KNorm = plus1(l.AttnNorm), plus1(l.FFNNorm), plus1(l.QNorm), plus1(l.KNorm)
	}
	m.Norm = plus1(m.Norm)
}
