package llama

import (
	"fmt"
	"io"

	"github.com/kiln-ai/kiln/kernels"
)

// Layer holds the weights of one decoder block. Matrices are row-major with
// one row per output feature (Rows = out, Cols = in).
type Layer struct {
	AttnNorm []float32 // Dim
	WQ       kernels.Matrix
	WK       kernels.Matrix // KVDim x Dim
	WV       kernels.Matrix // KVDim x Dim
	WO       kernels.Matrix // Dim x Dim
	FFNNorm  []float32      // Dim
	W1       kernels.Matrix // gate: HiddenDim x Dim
	W2       kernels.Matrix // down: Dim x HiddenDim
	W3       kernels.Matrix // up: HiddenDim x Dim
}

// Model is a loaded Llama-family decoder. Its weights are read-only once
// loaded, so any number of States may share one Model.
type Model struct {
	Config Config
	Embed  kernels.Matrix // token embedding, Vocab x Dim
	Layers []Layer
	Norm   []float32       // final RMSNorm, Dim
	Output *kernels.Matrix // classifier, Vocab x Dim; == &Embed when tied

	closer io.Closer // the memory map the weights alias, if any
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
		for _, w := range []*kernels.Matrix{&l.WQ, &l.WK, &l.WV, &l.WO, &l.W1, &l.W2, &l.W3} {
			n += int64(w.Bytes())
		}
		n += 4 * int64(len(l.AttnNorm)+len(l.FFNNorm))
	}
	n += 4*int64(len(m.Norm)) + int64(m.Output.Bytes())
	n += int64(m.Embed.Bytes() / m.Embed.Rows)
	return n
}

// validate checks every tensor against the configuration, so that Forward
// can index without checks.
func (m *Model) validate() error {
	c := m.Config
	if err := c.Validate(); err != nil {
		return err
	}
	d, kv, h := c.Dim, c.KVDim(), c.HiddenDim
	check := func(name string, w *kernels.Matrix, rows, cols int) error {
		if w.Rows != rows || w.Cols != cols {
			return fmt.Errorf("%w: %s is %dx%d, want %dx%d", ErrFormat, name, w.Rows, w.Cols, rows, cols)
		}
		if err := w.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrFormat, name, err)
		}
		return nil
	}
	vec := func(name string, v []float32) error {
		if len(v) != d {
			return fmt.Errorf("%w: %s has %d values, want %d", ErrFormat, name, len(v), d)
		}
		return nil
	}
	if err := check("token embedding", &m.Embed, c.Vocab, d); err != nil {
		return err
	}
	if len(m.Layers) != c.Layers {
		return fmt.Errorf("%w: %d layers, want %d", ErrFormat, len(m.Layers), c.Layers)
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, t := range []struct {
			name       string
			w          *kernels.Matrix
			rows, cols int
		}{
			{"wq", &l.WQ, d, d}, {"wk", &l.WK, kv, d}, {"wv", &l.WV, kv, d}, {"wo", &l.WO, d, d},
			{"w1", &l.W1, h, d}, {"w2", &l.W2, d, h}, {"w3", &l.W3, h, d},
		} {
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
	}
	if err := vec("final norm", m.Norm); err != nil {
		return err
	}
	if m.Output == nil {
		return fmt.Errorf("%w: no classifier", ErrFormat)
	}
	return check("classifier", m.Output, c.Vocab, d)
}

// embed writes the embedding of token tok into dst (len Dim), dequantising
// one row when the embedding is stored in a half or quantized type.
func (m *Model) embed(dst []float32, tok int) { dequantRow(dst, &m.Embed, tok) }

// dequantRow writes row r of w as float32 into dst (len w.Cols).
func dequantRow(dst []float32, w *kernels.Matrix, r int) { kernels.DequantRow(dst, w, r) }
