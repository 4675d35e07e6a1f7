package llama

import (
	"fmt"

	"github.com/kiln-ai/kiln/kernels"
)

// Qwen3.5 is a hybrid decoder: of every FullAttnInterval layers, the last
// is gated full attention (a KV cache, as the other families, with a
// sigmoid gate on its output and rotary on part of each head) and the
// others are Gated DeltaNet, linear attention whose memory of the sequence
// is a fixed state per slot: the last ConvKernel-1 inputs of a causal
// depthwise convolution and one KeyDim x ValueDim matrix per value head
// (deltanet.go). The state's size does not grow with the sequence, so a
// slot's memory is its attention layers' KV cache plus a constant.

// LinearShape is the shape of a Gated DeltaNet layer.
type LinearShape struct {
	KeyHeads   int // query/key heads
	ValueHeads int // value heads, a multiple of KeyHeads; each reads one key head
	KeyDim     int // width of a query/key head
	ValueDim   int // width of a value head
	ConvKernel int // taps of the causal depthwise convolution
	// Tiled says which key head value head j reads: j % KeyHeads (GGUF,
	// whose converter reorders the value heads so) or j / (ValueHeads /
	// KeyHeads) (Hugging Face).
	Tiled bool
}

// ConvDim is the number of convolved channels: queries, keys and values.
func (s LinearShape) ConvDim() int { return 2*s.KeyHeads*s.KeyDim + s.ValueHeads*s.ValueDim }

// QKDim is the width of all query (or key) heads.
func (s LinearShape) QKDim() int { return s.KeyHeads * s.KeyDim }

// VDim is the width of all value heads: the mixer's output before its
// projection.
func (s LinearShape) VDim() int { return s.ValueHeads * s.ValueDim }

// keyHead is the key head value head j reads.
func (s LinearShape) keyHead(j int) int {
	if s.Tiled {
		return j % s.KeyHeads
	}
	return j / (s.ValueHeads / s.KeyHeads)
}

// stateFloats is one layer's recurrent state: the convolution's window and
// the delta rule's matrices.
func (s LinearShape) stateFloats() int {
	return (s.ConvKernel-1)*s.ConvDim() + s.ValueHeads*s.KeyDim*s.ValueDim
}

// Hybrid reports whether the model has Gated DeltaNet layers.
func (c Config) Hybrid() bool { return c.FullAttnInterval > 0 }

// IsLinear reports whether layer l is a Gated DeltaNet layer.
func (c Config) IsLinear(l int) bool { return c.Hybrid() && (l+1)%c.FullAttnInterval != 0 }

// AttnLayers is the number of layers with a KV cache.
func (c Config) AttnLayers() int {
	if !c.Hybrid() {
		return c.Layers
	}
	return c.Layers / c.FullAttnInterval
}

// kvLayer is the index of attention layer l among the attention layers
// (its place in a KV block).
func (c Config) kvLayer(l int) int {
	if !c.Hybrid() {
		return l
	}
	return l / c.FullAttnInterval
}

// RotaryDims is the number of dimensions of a head the rotary embedding
// turns.
func (c Config) RotaryDims() int {
	if c.RotaryDim > 0 {
		return c.RotaryDim
	}
	return c.HeadDim()
}

// QProjDim is the width of the query projection's output: the queries,
// and with AttnGate each head's gate after its query.
func (c Config) QProjDim() int {
	if c.AttnGate {
		return 2 * c.QDim()
	}
	return c.QDim()
}

// RecurrentBytesPerSlot is the recurrent state of one slot (float32),
// whatever its length: 0 for a model without Gated DeltaNet layers.
func (c Config) RecurrentBytesPerSlot() int64 {
	if !c.Hybrid() {
		return 0
	}
	return 4 * int64(c.Layers-c.AttnLayers()) * int64(c.Linear.stateFloats())
}

// validateHybrid checks the hybrid fields of a Config that has them.
func (c Config) validateHybrid() error {
	if c.RotaryDim < 0 || c.RotaryDim > c.HeadDim() || c.RotaryDim%2 != 0 {
		return fmt.Errorf("%w: rotary dimensions %d, want an even number up to the head size %d", ErrFormat, c.RotaryDim, c.HeadDim())
	}
	if !c.Hybrid() {
		if c.Linear != (LinearShape{}) {
			return fmt.Errorf("%w: a linear-attention shape without a full-attention interval", ErrFormat)
		}
		return nil
	}
	s := c.Linear
	for _, f := range []struct {
		name string
		v    int
	}{
		{"full_attention_interval", c.FullAttnInterval}, {"linear key heads", s.KeyHeads}, {"linear value heads", s.ValueHeads},
		{"linear key head size", s.KeyDim}, {"linear value head size", s.ValueDim}, {"conv kernel", s.ConvKernel},
	} {
		if f.v <= 0 || f.v > 1<<12 {
			return fmt.Errorf("%w: %s %d out of range [1, 4096]", ErrFormat, f.name, f.v)
		}
	}
	switch {
	case c.FullAttnInterval < 2 || c.Layers%c.FullAttnInterval != 0:
		return fmt.Errorf("%w: %d layers are not whole groups of full_attention_interval %d", ErrFormat, c.Layers, c.FullAttnInterval)
	case s.ValueHeads%s.KeyHeads != 0:
		return fmt.Errorf("%w: linear value heads %d not a multiple of its key heads %d", ErrFormat, s.ValueHeads, s.KeyHeads)
	case s.ConvKernel < 2 || s.ConvKernel > 16:
		return fmt.Errorf("%w: conv kernel %d out of range [2, 16]", ErrFormat, s.ConvKernel)
	}
	return nil
}

// DeltaNet holds the weights of a Gated DeltaNet mixer.
type DeltaNet struct {
	WQKV kernels.Matrix // ConvDim x Dim: queries, keys, values, before the convolution
	WZ   kernels.Matrix // VDim x Dim: the output gate
	WB   kernels.Matrix // ValueHeads x Dim: β = sigmoid(WB·x)
	WA   kernels.Matrix // ValueHeads x Dim: the decay's input
	WOut kernels.Matrix // Dim x VDim

	Conv   []float32 // ConvDim x ConvKernel: tap j of channel ch at ch*ConvKernel+j, the oldest first
	DtBias []float32 // ValueHeads
	A      []float32 // ValueHeads: −exp(A_log), the decay rate
	Norm   []float32 // ValueDim: the gated RMSNorm's weight (plain, not 1+w)
}

// validateLinear checks layer i's Gated DeltaNet tensors.
func (m *Model) validateLinear(i int, d *DeltaNet) error {
	c := m.Config
	s := c.Linear
	if d == nil {
		return fmt.Errorf("%w: layer %d has no linear-attention weights", ErrFormat, i)
	}
	for _, t := range []struct {
		name       string
		w          *kernels.Matrix
		rows, cols int
	}{
		{"in_proj_qkv", &d.WQKV, s.ConvDim(), c.Dim}, {"in_proj_z", &d.WZ, s.VDim(), c.Dim},
		{"in_proj_b", &d.WB, s.ValueHeads, c.Dim}, {"in_proj_a", &d.WA, s.ValueHeads, c.Dim},
		{"out_proj", &d.WOut, c.Dim, s.VDim()},
	} {
		if err := checkMatrix(fmt.Sprintf("layer %d %s", i, t.name), t.w, t.rows, t.cols); err != nil {
			return err
		}
	}
	for _, v := range []struct {
		name string
		v    []float32
		n    int
	}{
		{"conv1d", d.Conv, s.ConvDim() * s.ConvKernel}, {"dt_bias", d.DtBias, s.ValueHeads},
		{"A", d.A, s.ValueHeads}, {"gated norm", d.Norm, s.ValueDim},
	} {
		if err := checkVector(fmt.Sprintf("layer %d %s", i, v.name), v.v, v.n); err != nil {
			return err
		}
	}
	return nil
}

// products lists a Gated DeltaNet layer's matrices.
func (d *DeltaNet) products() []*kernels.Matrix {
	return []*kernels.Matrix{&d.WQKV, &d.WZ, &d.WB, &d.WA, &d.WOut}
}
