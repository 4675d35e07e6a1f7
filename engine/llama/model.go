package llama

import (
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/kiln-ai/kiln/kernels"
)

// Layer holds the weights of one decoder block. Matrices are row-major with
// one row per output feature (Rows = out, Cols = in).
type Layer struct {
	AttnNorm []float32      // Dim
	WQ       kernels.Matrix // QDim x Dim
	WK       kernels.Matrix // KVDim x Dim
	WV       kernels.Matrix // KVDim x Dim
	WO       kernels.Matrix // Dim x QDim
	FFNNorm  []float32      // Dim
	W1       kernels.Matrix // gate: HiddenDim x Dim
	W2       kernels.Matrix // down: Dim x HiddenDim
	W3       kernels.Matrix // up: HiddenDim x Dim

	// Present only when Config.QKVBias: added to the projections (QDim,
	// KVDim, KVDim).
	BQ, BK, BV []float32
	// Present only when Config.QKNorm: the per-head RMSNorm weights applied
	// to every query and key head before RoPE (HeadDim each).
	QNorm, KNorm []float32

	// Lin is the Gated DeltaNet mixer of a linear layer of a hybrid model
	// (Config.IsLinear), which has no WQ, WK, WV, WO, biases or Q/K norms;
	// nil for an attention layer.
	Lin *DeltaNet
}

// matrices lists the layer's weight matrices, each once.
func (l *Layer) matrices() []*kernels.Matrix {
	ffn := []*kernels.Matrix{&l.W1, &l.W2, &l.W3}
	if l.Lin != nil {
		return append(l.Lin.products(), ffn...)
	}
	return append([]*kernels.Matrix{&l.WQ, &l.WK, &l.WV, &l.WO}, ffn...)
}

// vectors lists the layer's norms, biases and other float vectors.
func (l *Layer) vectors() [][]float32 {
	v := [][]float32{l.AttnNorm, l.FFNNorm, l.BQ, l.BK, l.BV, l.QNorm, l.KNorm}
	if d := l.Lin; d != nil {
		v = append(v, d.Conv, d.DtBias, d.A, d.Norm)
	}
	return v
}

// Model is a loaded Llama-family decoder. Its weights are read-only once
// loaded, so any number of States may share one Model.
type Model struct {
	Config Config
	Embed  kernels.Matrix // token embedding, Vocab x Dim
	Layers []Layer
	Norm   []float32       // final RMSNorm, Dim
	Output *kernels.Matrix // classifier, Vocab x Dim; == &Embed when tied

	// RopeFactors divides each rotary frequency (HeadDim/2 values, lowest
	// pair first), as Llama 3's rope_freqs / rope_scaling do; nil means none.
	RopeFactors []float32

	// Skipped says what of the file the loader left out (a vision tower,
	// multi-token-prediction layers), one phrase each, for the start-up
	// log; nil when nothing.
	Skipped []string

	closer io.Closer // the memory map the weights alias, if any
	// ownSeqLen is the context length the file gives, before OpenOptions'
	// cap (0: the file gives none beyond Config.SeqLen).
	ownSeqLen int
}

// Close releases the memory the weights alias (a GGUF memory map). The Model
// must not be used afterwards. It is idempotent.
func (m *Model) Close() error {
	c := m.closer
	m.closer = nil
	if c == nil {
		return nil
	}
	return c.Close()
}

// Tied reports whether the classifier shares the token embedding.
func (m *Model) Tied() bool { return m.Output == &m.Embed }

// StepBytes is the number of weight bytes one decode step reads: every layer
// matrix and norm, the final norm, one embedding row and the classifier. It
// is the numerator of the GB/s figure of the decode benchmarks.
func (m *Model) StepBytes() int64 {
	var n int64
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, w := range l.matrices() {
			n += int64(w.Bytes())
		}
		for _, v := range l.vectors() {
			n += 4 * int64(len(v))
		}
	}
	n += 4*int64(len(m.Norm)) + int64(m.Output.Bytes())
	n += int64(m.Embed.Bytes() / m.Embed.Rows)
	return n
}

// products lists the matrices Forward multiplies by, each once: every
// layer's and the classifier (the embedding when tied). An untied
// embedding is only read a row at a time, by the lookup.
func (m *Model) products() []*kernels.Matrix {
	ws := make([]*kernels.Matrix, 0, 8*len(m.Layers)+1)
	for i := range m.Layers {
		ws = append(ws, m.Layers[i].matrices()...)
	}
	return append(ws, m.Output)
}

// finish validates a newly built model and lays the matrices it
// multiplies by out for this CPU's fastest kernels (kernels.Prepare: on
// the avx512 path a packed copy of the quantized and float matrices, on
// avxvnni of the Q8_0 ones), which every constructor does last. release,
// when not nil, is given the row-major bytes of each matrix once its
// packed copy exists: their products no longer read them (a
// memory-mapped loader lets their pages go).
func (m *Model) finish(release func([]byte)) error {
	if err := m.validate(); err != nil {
		return err
	}
	var then func(*kernels.Matrix)
	if release != nil {
		then = func(w *kernels.Matrix) {
			if w.PackedBytes() > 0 {
				release(matrixBytes(w))
			}
		}
	}
	kernels.PrepareThen(then, m.products()...)
	return nil
}

// matrixBytes is the memory w's weights lie in (an F32 matrix's floats as
// bytes).
func matrixBytes(w *kernels.Matrix) []byte {
	if w.Type != kernels.F32 {
		return w.Raw
	}
	if len(w.F32) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w.F32))), 4*len(w.F32))
}

// validate checks every tensor against the configuration, so that Forward
// can index without checks.
func (m *Model) validate() error {
	c := m.Config
	if err := c.Validate(); err != nil {
		return err
	}
	d, kv, h, q := c.Dim, c.KVDim(), c.HiddenDim, c.QDim()
	check := func(name string, w *kernels.Matrix, rows, cols int) error {
		if w.Rows != rows || w.Cols != cols {
			return fmt.Errorf("%w: %s is %dx%d, want %dx%d", ErrFormat, name, w.Rows, w.Cols, rows, cols)
		}
		if err := w.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrFormat, name, err)
		}
		return nil
	}
	vecN := func(name string, v []float32, n int) error {
		if len(v) != n {
			return fmt.Errorf("%w: %s has %d values, want %d", ErrFormat, name, len(v), n)
		}
		return nil
	}
	vec := func(name string, v []float32) error { return vecN(name, v, d) }
	if err := m.validateRope(); err != nil {
		return err
	}
	if err := check("token embedding", &m.Embed, c.Vocab, d); err != nil {
		return err
	}
	if len(m.Layers) != c.Layers {
		return fmt.Errorf("%w: %d layers, want %d", ErrFormat, len(m.Layers), c.Layers)
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		mats := []struct {
			name       string
			w          *kernels.Matrix
			rows, cols int
		}{
			{"wq", &l.WQ, c.QProjDim(), d}, {"wk", &l.WK, kv, d}, {"wv", &l.WV, kv, d}, {"wo", &l.WO, d, q},
			{"w1", &l.W1, h, d}, {"w2", &l.W2, d, h}, {"w3", &l.W3, h, d},
		}
		if c.IsLinear(i) {
			if err := m.validateLinear(i, l.Lin, check, vecN); err != nil {
				return err
			}
			mats = mats[4:]
		} else if l.Lin != nil {
			return fmt.Errorf("%w: attention layer %d has linear-attention weights", ErrFormat, i)
		}
		for _, t := range mats {
			if err := check(fmt.Sprintf("layer %d %s", i, t.name), t.w, t.rows, t.cols); err != nil {
				return err
			}
		}
		if err := vec(fmt.Sprintf("layer %d attention norm", i), l.AttnNorm); err != nil {
			return err
		}
		if err := vec(fmt.Sprintf("layer %d ffn norm", i), l.FFNNorm); err != nil {
			return err
		}
		opt := func(name string, v []float32, on bool, n int) error {
			if !on {
				n = 0 // absent when the shape does not have it
			}
			return vecN(fmt.Sprintf("layer %d %s", i, name), v, n)
		}
		for _, o := range []struct {
			name string
			v    []float32
			on   bool
			n    int
		}{
			{"q bias", l.BQ, c.QKVBias && !c.IsLinear(i), q}, {"k bias", l.BK, c.QKVBias && !c.IsLinear(i), kv}, {"v bias", l.BV, c.QKVBias && !c.IsLinear(i), kv},
			{"q norm", l.QNorm, c.QKNorm && !c.IsLinear(i), c.HeadDim()}, {"k norm", l.KNorm, c.QKNorm && !c.IsLinear(i), c.HeadDim()},
		} {
			if err := opt(o.name, o.v, o.on, o.n); err != nil {
				return err
			}
		}
	}
	if err := vec("final norm", m.Norm); err != nil {
		return err
	}
	if m.Output == nil {
		return fmt.Errorf("%w: no classifier", ErrFormat)
	}
	return check("classifier", m.Output, c.Vocab, d)
}

// validateRope checks RopeFactors: none, or one positive finite divisor per
// rotary pair.
func (m *Model) validateRope() error {
	if m.RopeFactors == nil {
		return nil
	}
	if n := m.Config.HeadDim() / 2; len(m.RopeFactors) != n {
		return fmt.Errorf("%w: %d rope factors, want %d (head size / 2)", ErrFormat, len(m.RopeFactors), n)
	}
	for i, f := range m.RopeFactors {
		if !(f > 0) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("%w: rope factor %d is %g, want a positive finite number", ErrFormat, i, f)
		}
	}
	return nil
}

// embed writes the embedding of token tok into dst (len Dim), dequantising
// one row when the embedding is stored in a half or quantized type.
func (m *Model) embed(dst []float32, tok int) { dequantRow(dst, &m.Embed, tok) }

// dequantRow writes row r of w as float32 into dst (len w.Cols).
func dequantRow(dst []float32, w *kernels.Matrix, r int) { kernels.DequantRow(dst, w, r) }
