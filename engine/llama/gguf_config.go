package llama

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// ggufMeta reads one architecture's metadata keys of a GGUF file.
type ggufMeta struct {
	f    *gguf.File
	arch string
}

// ggufInt is a required integer key and where it goes.
type ggufInt struct {
	key string
	dst *int
}

// key is k under the architecture's prefix ("qwen2.block_count").
func (g ggufMeta) key(k string) string { return g.arch + "." + k }

// need reads the required integer key k, in [1, maxDim].
func (g ggufMeta) need(k string) (int, error) {
	v, ok := g.f.Uint(g.key(k))
	if !ok {
		return 0, fmt.Errorf("%w: gguf metadata %s missing or not a non-negative integer", ErrFormat, g.key(k))
	}
	if v == 0 || v > maxDim {
		return 0, fmt.Errorf("%w: gguf metadata %s = %d out of range [1, %d]", ErrFormat, g.key(k), v, maxDim)
	}
	return int(v), nil
}

// needAll reads each of keys into its destination, stopping at the first
// error.
func (g ggufMeta) needAll(keys ...ggufInt) error {
	for _, k := range keys {
		v, err := g.need(k.key)
		if err != nil {
			return err
		}
		*k.dst = v
	}
	return nil
}

// heads reads the KV head count and the head size, when the file gives
// them (the query heads' count and Dim/Heads otherwise).
func (g ggufMeta) heads(c *Config) error {
	var err error
	c.KVHeads = c.Heads
	if _, ok := g.f.Value(g.key("attention.head_count_kv")); ok {
		if c.KVHeads, err = g.need("attention.head_count_kv"); err != nil {
			return err
		}
	}
	if _, ok := g.f.Value(g.key("attention.key_length")); ok {
		if c.HeadSize, err = g.need("attention.key_length"); err != nil {
			return err
		}
		if v, ok := g.f.Uint(g.key("attention.value_length")); ok && v != uint64(c.HeadSize) {
			return fmt.Errorf("%w: gguf %s %d differs from the key length %d (not supported)", ErrFormat, g.key("attention.value_length"), v, c.HeadSize)
		}
	}
	return nil
}

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
	g := ggufMeta{f: f, arch: arch}
	key := g.key
	if err := g.needAll(
		ggufInt{"embedding_length", &c.Dim}, ggufInt{"feed_forward_length", &c.HiddenDim}, ggufInt{"block_count", &c.Layers},
		ggufInt{"attention.head_count", &c.Heads}, ggufInt{"context_length", &c.SeqLen},
	); err != nil {
		return Config{}, err
	}
	if err := g.heads(&c); err != nil {
		return Config{}, err
	}
	if spec.hybrid {
		if err := ggufHybrid(g, &c); err != nil {
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
