package llama

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/kiln-ai/kiln/kernels"
)

// Loaded.Format values: where the weights came from.
const (
	FormatEmbedded = "embedded" // kiln-tiny, built in memory
	FormatGGUF     = "gguf"
	FormatHF       = "hf" // a Hugging Face model directory
	FormatLlama2C  = "llama2c"
)

// OwnContext is the context length the model's file gives (GGUF
// context_length, config.json max_position_embeddings, the llama2.c
// seq_len), before OpenOptions.Context's cap; Config.SeqLen is the context
// it runs with.
func (m *Model) OwnContext() int {
	if m.ownSeqLen > 0 {
		return m.ownSeqLen
	}
	return m.Config.SeqLen
}

// Params is the number of weights the model holds (Config.Params of its
// shape, with its own classifier when untied).
func (m *Model) Params() int64 { return m.Config.Params(!m.Tied()) }

// KVBytesPerSlot is the KV cache memory of one slot holding a whole
// context.
func (m *Model) KVBytesPerSlot() int64 {
	return m.Config.KVBytesPerPos() * int64(m.Config.SeqLen)
}

// WeightTypes counts the model's tensors by storage type, with the type
// names in lower case as llama.cpp prints them ("q4_k", "f32"): the
// matrices in the type they run in, every norm, bias and rotary factor
// vector as f32. WeightBytes is the size of those tensors.
func (m *Model) WeightTypes() map[string]int {
	out := map[string]int{}
	m.eachTensor(func(w *kernels.Matrix, floats int) {
		if w != nil {
			out[strings.ToLower(w.Type.String())]++
		} else if floats > 0 {
			out["f32"]++
		}
	})
	return out
}

// WeightBytes is the size of the model's tensors as they are stored (the
// packed copies some CPUs' kernels read not counted).
func (m *Model) WeightBytes() int64 {
	var n int64
	m.eachTensor(func(w *kernels.Matrix, floats int) {
		if w != nil {
			n += int64(w.Bytes())
		} else {
			n += 4 * int64(floats)
		}
	})
	return n
}

// eachTensor calls f with every matrix (floats 0) and every vector (w
// nil) of the model, the classifier only when it is not the embedding.
func (m *Model) eachTensor(f func(w *kernels.Matrix, floats int)) {
	f(&m.Embed, 0)
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, w := range l.matrices() {
			f(w, 0)
		}
		for _, v := range l.vectors() {
			f(nil, len(v))
		}
	}
	f(nil, len(m.Norm))
	f(nil, len(m.RopeFactors))
	if !m.Tied() {
		f(m.Output, 0)
	}
}

// weightFiles is the size of the files the weights of spec (of kind k)
// came from, and how much of it is memory-mapped. A size it cannot read
// is left out: the model is loaded, the figure is only reported.
func weightFiles(spec string, k Kind) (size, mapped int64) {
	files := []string{spec}
	if k == KindHFDir {
		names, _, _ := shardNames(spec)
		files = files[:0]
		for _, n := range names {
			files = append(files, filepath.Join(spec, n))
		}
	}
	for _, p := range files {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	if k == KindLlama2C {
		return size, 0 // read into memory, not mapped
	}
	return size, size
}
