package llama

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/kiln-ai/kiln/kernels"
)

// llama2c header: seven little-endian int32.
const llama2cHeader = 7 * 4

// Magic numbers of formats that are not llama2.c version 0, recognised to
// give a precise error.
const (
	llama2cMagicV1 = 0x616b3432 // "ak42": llama2.c export versions 1 and 2
	ggufMagic      = 0x46554747 // "GGUF"
)

// LoadLlama2C reads a checkpoint in the llama2.c format (legacy version 0,
// float32 weights, classifier shared with the token embedding when the
// header's vocab_size is positive, separate when negative).
func LoadLlama2C(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llama: load llama2.c checkpoint: %w", err)
	}
	m, err := ParseLlama2C(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return m, nil
}

// ParseLlama2C decodes a llama2.c version 0 checkpoint held in memory. The
// weights are copied out of data.
func ParseLlama2C(data []byte) (*Model, error) {
	c, untied, err := parseLlama2CHeader(data)
	if err != nil {
		return nil, err
	}
	// The float count: the weights, the legacy RoPE tables (SeqLen x HeadDim
	// floats in all), then the classifier when untied.
	ropeFloats := int64(c.SeqLen) * int64(c.HeadDim())
	want := c.Params(untied) + ropeFloats
	body := int64(len(data) - llama2cHeader)
	if body != 4*want {
		return nil, fmt.Errorf("%w: llama2.c checkpoint has %d bytes of weights, the header (dim %d, hidden %d, layers %d, heads %d, kv heads %d, vocab %d, seq_len %d, untied %v) needs %d",
			ErrFormat, body, c.Dim, c.HiddenDim, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen, untied, 4*want)
	}

	all := make([]float32, want)
	for i := range all {
		all[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[llama2cHeader+4*i:]))
	}
	take := func(n int) []float32 {
		s := all[:n:n]
		all = all[n:]
		return s
	}
	d, kv, hd, L := c.Dim, c.KVDim(), c.HiddenDim, c.Layers
	mat := func(f []float32, rows, cols int) kernels.Matrix {
		return kernels.Matrix{Rows: rows, Cols: cols, Type: kernels.F32, F32: f}
	}
	m := &Model{Config: c, Layers: make([]Layer, L)}
	m.Embed = mat(take(c.Vocab*d), c.Vocab, d)
	// Per-kind tensors are stored for all layers at once.
	rmsAtt := take(L * d)
	wq := take(L * d * d)
	wk := take(L * kv * d)
	wv := take(L * kv * d)
	wo := take(L * d * d)
	rmsFFN := take(L * d)
	w1 := take(L * hd * d)
	w2 := take(L * d * hd)
	w3 := take(L * hd * d)
	for l := range L {
		m.Layers[l] = Layer{
			AttnNorm: rmsAtt[l*d : (l+1)*d : (l+1)*d],
			WQ:       mat(wq[l*d*d:(l+1)*d*d:(l+1)*d*d], d, d),
			WK:       mat(wk[l*kv*d:(l+1)*kv*d:(l+1)*kv*d], kv, d),
			WV:       mat(wv[l*kv*d:(l+1)*kv*d:(l+1)*kv*d], kv, d),
			WO:       mat(wo[l*d*d:(l+1)*d*d:(l+1)*d*d], d, d),
			FFNNorm:  rmsFFN[l*d : (l+1)*d : (l+1)*d],
			W1:       mat(w1[l*hd*d:(l+1)*hd*d:(l+1)*hd*d], hd, d),
			W2:       mat(w2[l*d*hd:(l+1)*d*hd:(l+1)*d*hd], d, hd),
			W3:       mat(w3[l*hd*d:(l+1)*hd*d:(l+1)*hd*d], hd, d),
		}
	}
	m.Norm = take(d)
	take(int(ropeFloats))
	if untied {
		out := mat(take(c.Vocab*d), c.Vocab, d)
		m.Output = &out
	} else {
		m.Output = &m.Embed
	}
	if err := m.finish(nil); err != nil {
		return nil, err
	}
	return m, nil
}

// WriteLlama2C appends m in the llama2.c version 0 format to dst. Every
// matrix must be F32. The legacy RoPE tables are written as zeros.
func WriteLlama2C(dst []byte, m *Model) ([]byte, error) {
	c := m.Config
	vocab := int32(c.Vocab)
	if !m.Tied() {
		vocab = -vocab
	}
	for _, v := range []int32{int32(c.Dim), int32(c.HiddenDim), int32(c.Layers), int32(c.Heads), int32(c.KVHeads), vocab, int32(c.SeqLen)} {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	var err error
	put := func(f []float32) {
		for _, v := range f {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
	}
	putM := func(w *kernels.Matrix) {
		if w.Type != kernels.F32 {
			err = fmt.Errorf("llama: write llama2.c: %v matrix, only F32 is representable", w.Type)
			return
		}
		put(w.F32)
	}
	putM(&m.Embed)
	each := func(f func(l *Layer)) {
		for i := range m.Layers {
			f(&m.Layers[i])
		}
	}
	each(func(l *Layer) { put(l.AttnNorm) })
	each(func(l *Layer) { putM(&l.WQ) })
	each(func(l *Layer) { putM(&l.WK) })
	each(func(l *Layer) { putM(&l.WV) })
	each(func(l *Layer) { putM(&l.WO) })
	each(func(l *Layer) { put(l.FFNNorm) })
	each(func(l *Layer) { putM(&l.W1) })
	each(func(l *Layer) { putM(&l.W2) })
	each(func(l *Layer) { putM(&l.W3) })
	put(m.Norm)
	put(make([]float32, c.SeqLen*c.HeadDim()))
	if !m.Tied() {
		putM(m.Output)
	}
	return dst, err
}

// parseLlama2CHeader reads the seven int32 of a legacy (version 0)
// llama2.c header into a validated Config; a negative vocabulary size
// means an untied classifier.
func parseLlama2CHeader(data []byte) (Config, bool, error) {
	if len(data) < llama2cHeader {
		return Config{}, false, fmt.Errorf("%w: llama2.c checkpoint truncated: %d bytes, header needs %d", ErrFormat, len(data), llama2cHeader)
	}
	var h [7]int32
	for i := range h {
		h[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	switch uint32(h[0]) {
	case llama2cMagicV1:
		return Config{}, false, fmt.Errorf("%w: llama2.c export version 1/2 (magic ak42) is not supported; export with the legacy version 0", ErrFormat)
	case ggufMagic:
		return Config{}, false, fmt.Errorf("%w: a GGUF file, not a llama2.c checkpoint", ErrFormat)
	}
	untied := h[5] < 0
	vocab := int(h[5])
	if untied {
		vocab = -vocab
	}
	c := Config{
		Dim: int(h[0]), HiddenDim: int(h[1]), Layers: int(h[2]), Heads: int(h[3]),
		KVHeads: int(h[4]), Vocab: vocab, SeqLen: int(h[6]),
	}.withDefaults()
	if err := c.Validate(); err != nil {
		return Config{}, false, fmt.Errorf("llama2.c header: %w", err)
	}
	return c, untied, nil
}
