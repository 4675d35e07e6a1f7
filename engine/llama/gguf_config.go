package llama

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// ggufConfig reads the model shape from a GGUF file's metadata, whose keys
// sit under the architecture's name ("qwen2.block_count").
func ggufConfig(f *gguf.File, maxSeqLen int) (Config, error) {
	if maxSeqLen <= 0 {
		maxSeqLen = DefaultMaxSeqLen
	}
	arch, _ := f.String("general.architecture")
	spec, ok := ggufArchs[arch]
	if !ok {
		return Config{}, fmt.Errorf("%w: gguf general.architecture %q is not supported; supported: %s", ErrFormat, arch, supportedList(ggufArchs))
	}
	c := Config{Arch: arch, Rope: spec.rope, QKVBias: spec.qkvBias, QKNorm: spec.qkNorm}
	key := func(k string) string { return arch + "." + k }
	need := func(k string) (int, error) {
		v, ok := f.Uint(key(k))
		if !ok {
			return 0, fmt.Errorf("%w: gguf metadata %s missing or not a non-negative integer", ErrFormat, key(k))
		}
		if v == 0 || v > maxDim {
			return 0, fmt.Errorf("%w: gguf metadata %s = %d out of range [1, %d]", ErrFormat, key(k), v, maxDim)
		}
		return int(v), nil
	}
	var err error
	for _, k := range []struct {
		key string
		dst *int
	}{
		{"embedding_length", &c.Dim},
		{"feed_forward_length", &c.HiddenDim},
		{"block_count", &c.Layers},
		{"attention.head_count", &c.Heads},
		{"context_length", &c.SeqLen},
	} {
		if *k.dst, err = need(k.key); err != nil {
			return Config{}, err
		}
	}
	c.KVHeads = c.Heads
	if _, ok := f.Value(key("attention.head_count_kv")); ok {
		if c.KVHeads, err = need("attention.head_count_kv"); err != nil {
			return Config{}, err
		}
	}
	if _, ok := f.Value(key("attention.key_length")); ok {
		if c.HeadSize, err = need("attention.key_length"); err != nil {
			return Config{}, err
		}
		if v, ok := f.Uint(key("attention.value_length")); ok && v != uint64(c.HeadSize) {
			return Config{}, fmt.Errorf("%w: gguf %s %d differs from the key length %d (not supported)", ErrFormat, key("attention.value_length"), v, c.HeadSize)
		}
	}
	if spec.hybrid {
		if err := ggufHybrid(f, &c, need); err != nil {
			return Config{}, err
		}
	}
	c.SeqLen = min(c.SeqLen, maxSeqLen)
	if v, ok := f.Float(key("attention.layer_norm_rms_epsilon")); ok {
		c.NormEps = float32(v)
	}
	if v, ok := f.Float(key("rope.freq_base")); ok {
		c.RopeTheta = float32(v)
	}
	if s, ok := f.String(key("rope.scaling.type")); ok && s != "none" {
		return Config{}, fmt.Errorf("%w: gguf %s %q is not supported (Llama 3 scaling comes as the rope_freqs tensor)", ErrFormat, key("rope.scaling.type"), s)
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return Config{}, fmt.Errorf("%w: gguf tensor token_embd.weight missing", ErrFormat)
	}
	if len(emb.Dims) != 2 || emb.Dims[1] == 0 || emb.Dims[1] > maxDim {
		return Config{}, fmt.Errorf("%w: gguf token_embd.weight has shape %v, want [%d, vocab]", ErrFormat, emb.Dims, c.Dim)
	}
	c.Vocab = int(emb.Dims[1])
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("gguf %s metadata: %w", arch, err)
	}
	if n, ok := f.Uint(key("rope.dimension_count")); ok && n != uint64(c.RotaryDims()) {
		return Config{}, fmt.Errorf("%w: gguf %s %d, want the head size %d (partial rotary is not supported)", ErrFormat, key("rope.dimension_count"), n, c.HeadDim())
	}
	return c, nil
}
