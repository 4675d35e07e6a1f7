package llama

import (
	"encoding/json"
	"fmt"
	"math"
)

// hfConfig is the part of a Hugging Face config.json the engine reads.
// Pointers mark keys whose absence means something.
type hfConfig struct {
	Architectures         []string       `json:"architectures"`
	HiddenSize            int            `json:"hidden_size"`
	IntermediateSize      int            `json:"intermediate_size"`
	NumHiddenLayers       int            `json:"num_hidden_layers"`
	NumAttentionHeads     int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int           `json:"num_key_value_heads"`
	HeadDim               *int           `json:"head_dim"`
	VocabSize             int            `json:"vocab_size"`
	MaxPositionEmbeddings int            `json:"max_position_embeddings"`
	RMSNormEps            float64        `json:"rms_norm_eps"`
	RopeTheta             float64        `json:"rope_theta"`
	RopeScaling           *hfRopeScaling `json:"rope_scaling"`
	TieWordEmbeddings     *bool          `json:"tie_word_embeddings"`
	TorchDtype            string         `json:"torch_dtype"`
	HiddenAct             string         `json:"hidden_act"`
	AttentionBias         bool           `json:"attention_bias"`
	MLPBias               bool           `json:"mlp_bias"`
	UseSlidingWindow      bool           `json:"use_sliding_window"`
}

// hfRopeScaling is config.json's rope_scaling; older files say "type".
type hfRopeScaling struct {
	RopeType       string  `json:"rope_type"`
	Type           string  `json:"type"`
	Factor         float64 `json:"factor"`
	LowFreqFactor  float64 `json:"low_freq_factor"`
	HighFreqFactor float64 `json:"high_freq_factor"`
	OrigMaxPos     float64 `json:"original_max_position_embeddings"`
}

// hfModelConfig is what config.json says about the model: its shape, the
// rotary factors (Llama 3 scaling) and whether the classifier is tied
// (nil: the file does not say; the presence of lm_head.weight decides).
type hfModelConfig struct {
	Config
	RopeFactors []float32
	Tied        *bool
	OwnSeqLen   int    // max_position_embeddings, before the cap
	Prefix      string // of the text model's tensor names: "model." or, nested in a vision-language checkpoint, "model.language_model."
}

// parseHFConfig decodes config.json. maxSeqLen caps the context (0 means
// DefaultMaxSeqLen). Anything the engine would silently compute wrong (an
// unknown architecture, activation or RoPE scaling, sliding windows, MLP
// biases) is refused.
func parseHFConfig(data []byte, maxSeqLen int) (hfModelConfig, error) {
	if maxSeqLen <= 0 {
		maxSeqLen = DefaultMaxSeqLen
	}
	var h hfConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return hfModelConfig{}, fmt.Errorf("%w: config.json: %w", ErrFormat, err)
	}
	text, prefix, err := hfTextConfig(data)
	if err != nil {
		return hfModelConfig{}, err
	}
	if prefix != "model." {
		archs, tied := h.Architectures, h.TieWordEmbeddings
		h = hfConfig{}
		if err := json.Unmarshal(text, &h); err != nil {
			return hfModelConfig{}, fmt.Errorf("%w: config.json text_config: %w", ErrFormat, err)
		}
		h.Architectures = archs
		if h.TieWordEmbeddings == nil {
			h.TieWordEmbeddings = tied
		}
	}
	if len(h.Architectures) != 1 {
		return hfModelConfig{}, fmt.Errorf("%w: config.json architectures %q, want one of: %s", ErrFormat, h.Architectures, supportedList(hfArchs))
	}
	arch, ok := hfArchs[h.Architectures[0]]
	if !ok {
		return hfModelConfig{}, fmt.Errorf("%w: config.json architecture %q is not supported; supported: %s", ErrFormat, h.Architectures[0], supportedList(hfArchs))
	}
	switch {
	case h.HiddenAct != "" && h.HiddenAct != "silu":
		return hfModelConfig{}, fmt.Errorf("%w: config.json hidden_act %q is not supported (silu only)", ErrFormat, h.HiddenAct)
	case h.MLPBias:
		return hfModelConfig{}, fmt.Errorf("%w: config.json mlp_bias is not supported", ErrFormat)
	case h.UseSlidingWindow:
		return hfModelConfig{}, fmt.Errorf("%w: config.json use_sliding_window is not supported", ErrFormat)
	}
	spec := ggufArchs[arch]
	c := Config{
		Arch: arch, Dim: h.HiddenSize, HiddenDim: h.IntermediateSize, Layers: h.NumHiddenLayers,
		Heads: h.NumAttentionHeads, KVHeads: h.NumAttentionHeads, Vocab: h.VocabSize,
		SeqLen:  min(h.MaxPositionEmbeddings, maxSeqLen),
		NormEps: float32(h.RMSNormEps), RopeTheta: float32(h.RopeTheta),
		// Hugging Face keeps Q/K rows in half-split order for every family.
		Rope: RopeNeoX, QKVBias: spec.qkvBias || h.AttentionBias, QKNorm: spec.qkNorm,
	}
	if h.NumKeyValueHeads != nil {
		c.KVHeads = *h.NumKeyValueHeads
	}
	if h.HeadDim != nil {
		if *h.HeadDim <= 0 {
			return hfModelConfig{}, fmt.Errorf("%w: config.json head_dim %d", ErrFormat, *h.HeadDim)
		}
		c.HeadSize = *h.HeadDim
	}
	if spec.hybrid {
		if err := applyQwen35(text, &c); err != nil {
			return hfModelConfig{}, err
		}
	}
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return hfModelConfig{}, fmt.Errorf("config.json: %w", err)
	}
	out := hfModelConfig{Config: c, Tied: h.TieWordEmbeddings, OwnSeqLen: h.MaxPositionEmbeddings, Prefix: prefix}
	if h.RopeScaling != nil {
		var err error
		if out.RopeFactors, err = h.RopeScaling.factors(c); err != nil {
			return hfModelConfig{}, err
		}
	}
	return out, nil
}

// factors turns a rope_scaling of type llama3 into per-frequency divisors.
func (r *hfRopeScaling) factors(c Config) ([]float32, error) {
	typ := r.RopeType
	if typ == "" {
		typ = r.Type
	}
	if typ == "default" {
		return nil, nil
	}
	if typ != "llama3" {
		return nil, fmt.Errorf("%w: config.json rope_scaling type %q is not supported (llama3 only)", ErrFormat, typ)
	}
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	if !ok(r.Factor) || !ok(r.LowFreqFactor) || !ok(r.HighFreqFactor) || !ok(r.OrigMaxPos) || !(r.HighFreqFactor > r.LowFreqFactor) {
		return nil, fmt.Errorf("%w: config.json rope_scaling llama3 needs positive factor, low_freq_factor < high_freq_factor and original_max_position_embeddings (got %+v)", ErrFormat, *r)
	}
	return Llama3RopeFactors(c.HeadDim(), float64(c.RopeTheta), r.Factor, r.LowFreqFactor, r.HighFreqFactor, r.OrigMaxPos), nil
}
