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
	if err := m.validateRope(); err != nil {
		return err
	}
	if err := checkMatrix("token embedding", &m.Embed, c.Vocab, c.Dim); err != nil {
		return err
	}
	if len(m.Layers) != c.Layers {
		return fmt.Errorf("%w: %d layers, want %d", ErrFormat, len(m.Layers), c.Layers)
	}
	for i := range m.Layers {
		if err := m.validateLayer(i); err != nil {
			return err
		}
	}
	if err := checkVector("final norm", m.Norm, c.Dim); err != nil {
		return err
	}
	if m.Output == nil {
		return fmt.Errorf("%w: no classifier", ErrFormat)
	}
	return checkMatrix("classifier", m.Output, c.Vocab, c.Dim)
}

// validateLayer checks layer i's tensors: its mixer's (attention, or a
// hybrid's Gated DeltaNet), its feed-forward's and norms, and the biases
// and Q/K norms exactly when an attention layer of the shape has them.
func (m *Model) validateLayer(i int) error {
	c := m.Config
	d, kv, h, q := c.Dim, c.KVDim(), c.HiddenDim, c.QDim()
	l := &m.Layers[i]
	mats := []struct {
		name       string
		w          *kernels.Matrix
		rows, cols int
	}{
		{"wq", &l.WQ, c.QProjDim(), d}, {"wk", &l.WK, kv, d}, {"wv", &l.WV, kv, d}, {"wo", &l.WO, d, q},
		{"w1", &l.W1, h, d}, {"w2", &l.W2, d, h}, {"w3", &l.W3, h, d},
	}
	attn := !c.IsLinear(i)
	if !attn {
		if err := m.validateLinear(i, l.Lin); err != nil {
			return err
		}
		mats = mats[4:]
	} else if l.Lin != nil {
		return fmt.Errorf("%w: attention layer %d has linear-attention weights", ErrFormat, i)
	}
	for _, t := range mats {
		if err := checkMatrix(fmt.Sprintf("layer %d %s", i, t.name), t.w, t.rows, t.cols); err != nil {
			return err
		}
	}
	opt := func(on bool, n int) int {
		if !on {
			return 0 // absent when the shape does not have it
		}
		return n
	}
	bias, norm := attn && c.QKVBias, attn && c.QKNorm
	for _, v := range []struct {
		name string
		v    []float32
		n    int
	}{
		{"attention norm", l.AttnNorm, d}, {"ffn norm", l.FFNNorm, d},
		{"q bias", l.BQ, opt(bias, q)}, {"k bias", l.BK, opt(bias, kv)}, {"v bias", l.BV, opt(bias, kv)},
		{"q norm", l.QNorm, opt(norm, c.HeadDim())}, {"k norm", l.KNorm, opt(norm, c.HeadDim())},
	} {
		if err := checkVector(fmt.Sprintf("layer %d %s", i, v.name), v.v, v.n); err != nil {
			return err
		}
	}
	return nil
}

// checkMatrix checks a weight matrix's shape and storage.
func checkMatrix(name string, w *kernels.Matrix, rows, cols int) error {
	if w.Rows != rows || w.Cols != cols {
		return fmt.Errorf("%w: %s is %dx%d, want %dx%d", ErrFormat, name, w.Rows, w.Cols, rows, cols)
	}
	if err := w.Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrFormat, name, err)
	}
	return nil
}

// checkVector checks a vector's length.
func checkVector(name string, v []float32, n int) error {
	if len(v) != n {
		return fmt.Errorf("%w: %s has %d values, want %d", ErrFormat, name, len(v), n)
	}
	return nil
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
