package llama

import (
	"errors"
	"fmt"
)

// ErrFormat marks a model file that cannot be loaded: wrong magic or version,
// truncated, inconsistent dimensions, an unsupported tensor type. Every
// loader error about the file's contents wraps it.
var ErrFormat = errors.New("llama: invalid model file")

// Defaults applied when a Config leaves them zero.
const (
	DefaultNormEps   = 1e-5  // llama2.c's RMSNorm epsilon
	DefaultRopeTheta = 10000 // the original Llama rotary base
)

// maxDim bounds every dimension so that size arithmetic on hostile headers
// cannot overflow and a bad header cannot ask for absurd allocations.
const maxDim = 1 << 24

// Config is the shape of a Llama-family decoder (llama, qwen2, qwen3).
type Config struct {
	Arch      string // architecture name as the file gives it ("llama", "qwen2", "qwen3"); informational
	Dim       int    // width of the residual stream
	HiddenDim int    // width of the SwiGLU feed-forward
	Layers    int
	Heads     int // query heads
	KVHeads   int // key/value heads (grouped-query attention when < Heads)
	HeadSize  int // width of one head; 0 means Dim/Heads (qwen3 may differ)
	Vocab     int
	SeqLen    int // longest sequence the KV cache holds
	NormEps   float32
	RopeTheta float32
	Rope      RopeStyle // which elements of a head the rotary embedding pairs
	QKVBias   bool      // every layer adds BQ, BK, BV after the projections (qwen2)
	QKNorm    bool      // every layer RMS-normalises each Q and K head before RoPE (qwen3)

	// Qwen3.5 (qwen35) is a hybrid: Gated DeltaNet layers between gated
	// full-attention layers (hybrid.go). The zero values mean a plain
	// decoder of attention layers.
	FullAttnInterval int         // > 0: layer i is full attention when (i+1) % FullAttnInterval == 0, else Gated DeltaNet
	RotaryDim        int         // dimensions of a head the rotary embedding turns (partial rotary); 0: all of it
	AttnGate         bool        // the query projection carries a sigmoid output gate per head ([query | gate] rows)
	Linear           LinearShape // the Gated DeltaNet layers' shape
}

// RopeStyle says which elements of a head one rotary frequency rotates
// together.
type RopeStyle uint8

const (
	// RopeNorm rotates adjacent pairs (2i, 2i+1): llama2.c, and GGUF llama
	// files, whose Q/K rows llama.cpp's converter permutes for it.
	RopeNorm RopeStyle = iota
	// RopeNeoX rotates (i, i+HeadDim/2), transformers' rotate_half: qwen2,
	// qwen3, and llama weights in Hugging Face row order.
	RopeNeoX
)

func (r RopeStyle) String() string {
	switch r {
	case RopeNorm:
		return "norm"
	case RopeNeoX:
		return "neox"
	}
	return fmt.Sprintf("RopeStyle(%d)", uint8(r))
}

// HeadDim is the width of one attention head.
func (c Config) HeadDim() int {
	if c.HeadSize > 0 {
		return c.HeadSize
	}
	return c.Dim / c.Heads
}

// QDim is the width of the queries (and of the attention output) of one
// position: Heads x HeadDim, which is Dim unless HeadSize says otherwise.
func (c Config) QDim() int { return c.HeadDim() * c.Heads }

// KVDim is the width of the keys (and values) of one position.
func (c Config) KVDim() int { return c.HeadDim() * c.KVHeads }

// withDefaults fills Arch, NormEps and RopeTheta when zero, and clears a
// HeadSize that merely restates Dim/Heads, so that equal shapes compare
// equal whichever file they came from.
func (c Config) withDefaults() Config {
	if c.Heads > 0 && c.Dim%c.Heads == 0 && c.HeadSize == c.Dim/c.Heads {
		c.HeadSize = 0
	}
	if c.Arch == "" {
		c.Arch = "llama"
	}
	if c.NormEps == 0 {
		c.NormEps = DefaultNormEps
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = DefaultRopeTheta
	}
	return c
}

// Validate reports the first inconsistency in c, naming the field.
func (c Config) Validate() error {
	fields := []struct {
		name string
		v    int
	}{
		{"dim", c.Dim}, {"hidden_dim", c.HiddenDim}, {"n_layers", c.Layers},
		{"n_heads", c.Heads}, {"n_kv_heads", c.KVHeads}, {"vocab_size", c.Vocab},
		{"seq_len", c.SeqLen},
	}
	for _, f := range fields {
		if f.v <= 0 || f.v > maxDim {
			return fmt.Errorf("%w: %s %d out of range [1, %d]", ErrFormat, f.name, f.v, maxDim)
		}
	}
	switch {
	case c.HeadSize < 0 || c.HeadSize > maxDim:
		return fmt.Errorf("%w: head size %d out of range [0, %d]", ErrFormat, c.HeadSize, maxDim)
	case c.HeadSize == 0 && c.Dim%c.Heads != 0:
		return fmt.Errorf("%w: dim %d not a multiple of n_heads %d", ErrFormat, c.Dim, c.Heads)
	case c.Rope != RopeNorm && c.Rope != RopeNeoX:
		return fmt.Errorf("%w: rope style %v unknown", ErrFormat, c.Rope)
	case c.KVHeads > c.Heads || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("%w: n_heads %d not a multiple of n_kv_heads %d", ErrFormat, c.Heads, c.KVHeads)
	case c.HeadDim()%2 != 0:
		return fmt.Errorf("%w: head size %d is odd (rotary embeddings rotate pairs)", ErrFormat, c.HeadDim())
	case !(c.NormEps > 0) || c.NormEps > 1:
		return fmt.Errorf("%w: rms norm epsilon %g out of range (0, 1]", ErrFormat, c.NormEps)
	case !(c.RopeTheta > 1) || c.RopeTheta > 1e12:
		return fmt.Errorf("%w: rope theta %g out of range (1, 1e12]", ErrFormat, c.RopeTheta)
	}
	if err := c.validateHybrid(); err != nil {
		return err
	}
	// The largest single tensor must be addressable.
	if !within(1<<40, c.Vocab, c.Dim) || !within(1<<40, c.Layers, c.Dim, c.HiddenDim) || !within(1<<40, c.Layers, c.Dim, c.Dim) ||
		!within(1<<40, c.Layers, c.Dim, c.Heads, c.HeadDim()) {
		return fmt.Errorf("%w: model too large (vocab %d, dim %d, hidden %d, layers %d)", ErrFormat, c.Vocab, c.Dim, c.HiddenDim, c.Layers)
	}
	return nil
}

// KVBytesPerPos is the KV cache memory one position of one slot takes:
// keys and values of every attention layer, float32.
func (c Config) KVBytesPerPos() int64 { return 2 * 4 * int64(c.AttnLayers()) * int64(c.KVDim()) }

// Params is the number of weights of a model of this shape with a separate
// (untied) classifier when untied is true (Q/K/V biases and Q/K norms
// included when the shape has them; rotary factors not).
func (c Config) Params(untied bool) int64 {
	d, h, kv := int64(c.Dim), int64(c.HiddenDim), int64(c.KVDim())
	q, attn := int64(c.QDim()), int64(c.AttnLayers())
	n := int64(c.Vocab)*d + d                          // embedding and final norm
	n += int64(c.Layers) * (2*d + 3*d*h)               // every layer's norms and feed-forward
	n += attn * (d*int64(c.QProjDim()) + 2*d*kv + d*q) // attention projections
	if c.QKVBias {
		n += attn * (q + 2*kv)
	}
	if c.QKNorm {
		n += attn * 2 * int64(c.HeadDim())
	}
	if s := c.Linear; c.Hybrid() {
		conv, vd, vh := int64(s.ConvDim()), int64(s.VDim()), int64(s.ValueHeads)
		n += int64(c.Layers-c.AttnLayers()) * (d*(conv+vd+2*vh) + vd*d + conv*int64(s.ConvKernel) + 2*vh + int64(s.ValueDim))
	}
	if untied {
		n += int64(c.Vocab) * d
	}
	return n
}

// within reports whether the product of the positive factors is at most limit,
// without overflowing.
func within(limit int64, factors ...int) bool {
	p := int64(1)
	for _, f := range factors {
		if int64(f) > limit/p {
			return false
		}
		p *= int64(f)
	}
	return true
}
