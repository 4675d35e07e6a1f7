package llama

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kiln-ai/kiln/engine/safetensors"
	"github.com/kiln-ai/kiln/kernels"
)

// hfIndex is the name of the shard index of a multi-file checkpoint.
const hfIndex = "model.safetensors.index.json"

// FromHFDir loads the weights of a Hugging Face model directory: config.json
// and its *.safetensors files (the shards model.safetensors.index.json lists,
// or every *.safetensors file when there is no index), memory-mapped and
// aliased, never copied. Q/K rows stay in Hugging Face order, which the
// half-split (NeoX) RoPE the config gets expects. The model's Close unmaps
// the files. maxSeqLen caps the context (0 means DefaultMaxSeqLen).
func FromHFDir(dir string, maxSeqLen int) (*Model, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("llama: hf directory: %w", err)
	}
	hc, err := parseHFConfig(data, maxSeqLen)
	if err != nil {
		return nil, err
	}
	ts, err := openShards(dir)
	if err != nil {
		return nil, err
	}
	m, err := ts.model(hc)
	if err != nil {
		_ = ts.Close()
		return nil, err
	}
	m.closer = ts
	m.ownSeqLen = hc.OwnSeqLen
	return m, nil
}

// hfTensors is the union of a checkpoint's shards, by tensor name.
type hfTensors struct {
	files  []*safetensors.File
	byName map[string]hfRef
	used   map[string]bool
}

type hfRef struct {
	f *safetensors.File
	t *safetensors.Tensor
}

// Close unmaps every shard.
func (h *hfTensors) Close() error {
	var errs []error
	for _, f := range h.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// openShards maps the directory's safetensors files and indexes their
// tensors, refusing a name that two shards hold or that the index places in
// another shard.
func openShards(dir string) (*hfTensors, error) {
	names, index, err := shardNames(dir)
	if err != nil {
		return nil, err
	}
	h := &hfTensors{byName: map[string]hfRef{}, used: map[string]bool{}}
	for _, name := range names {
		f, err := safetensors.Open(filepath.Join(dir, name))
		if err != nil {
			_ = h.Close()
			if errors.Is(err, safetensors.ErrFormat) {
				err = fmt.Errorf("%w: %w", ErrFormat, err)
			}
			return nil, err
		}
		h.files = append(h.files, f)
		for i := range f.Tensors {
			t := &f.Tensors[i]
			if _, dup := h.byName[t.Name]; dup {
				_ = h.Close()
				return nil, fmt.Errorf("%w: tensor %s is in two safetensors files", ErrFormat, t.Name)
			}
			if want, ok := index[t.Name]; index != nil && (!ok || want != name) {
				_ = h.Close()
				return nil, fmt.Errorf("%w: tensor %s is in %s but %s places it in %q", ErrFormat, t.Name, name, hfIndex, want)
			}
			h.byName[t.Name] = hfRef{f, t}
		}
	}
	for t, shard := range index {
		if _, ok := h.byName[t]; !ok {
			_ = h.Close()
			return nil, fmt.Errorf("%w: %s lists %s in %s, which does not hold it", ErrFormat, hfIndex, t, shard)
		}
	}
	return h, nil
}

// shardNames lists the safetensors files to read: the index's shards when
// there is an index (with its weight map), else every *.safetensors file.
func shardNames(dir string) ([]string, map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, hfIndex))
	if errors.Is(err, os.ErrNotExist) {
		paths, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
		if err != nil {
			return nil, nil, fmt.Errorf("llama: hf directory: %w", err)
		}
		if len(paths) == 0 {
			return nil, nil, fmt.Errorf("%w: %s has no *.safetensors file", ErrFormat, dir)
		}
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = filepath.Base(p)
		}
		return names, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("llama: hf directory: %w", err)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrFormat, hfIndex, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, nil, fmt.Errorf("%w: %s has an empty weight_map", ErrFormat, hfIndex)
	}
	var names []string
	for _, shard := range idx.WeightMap {
		if shard != filepath.Base(shard) || !strings.HasSuffix(shard, ".safetensors") {
			return nil, nil, fmt.Errorf("%w: %s names shard %q, not a .safetensors file in the directory", ErrFormat, hfIndex, shard)
		}
		names = append(names, shard)
	}
	slices.Sort(names)
	return slices.Compact(names), idx.WeightMap, nil
}

// model builds the Model config.json describes from the tensors.
func (h *hfTensors) model(hc hfModelConfig) (*Model, error) {
	c := hc.Config
	m := &Model{Config: c, Layers: make([]Layer, c.Layers), RopeFactors: hc.RopeFactors}
	pre := hc.Prefix
	var err error
	if m.Embed, err = h.matrix(pre+"embed_tokens.weight", c.Vocab, c.Dim); err != nil {
		return nil, err
	}
	for i := range m.Layers {
		if err := readLayer(h, hfLayerNames, &m.Layers[i], i, fmt.Sprintf("%slayers.%d.", pre, i), c); err != nil {
			return nil, err
		}
	}
	if m.Norm, err = h.vector(pre+"norm.weight", c.Dim); err != nil {
		return nil, err
	}
	if c.Hybrid() {
		m.centreNorms()
		m.Skipped = h.hfSkipped()
	}
	_, hasHead := h.byName["lm_head.weight"]
	if tied := hc.Tied; (tied != nil && !*tied) || (tied == nil && hasHead) {
		out, err := h.matrix("lm_head.weight", c.Vocab, c.Dim)
		if err != nil {
			return nil, err
		}
		m.Output = &out
	} else {
		h.used["lm_head.weight"] = true // a tied checkpoint may still carry a copy
		m.Output = &m.Embed
	}
	for name := range h.byName {
		if !h.used[name] && !strings.HasSuffix(name, ".rotary_emb.inv_freq") {
			return nil, fmt.Errorf("%w: safetensors tensor %s is not part of the %s architecture this engine runs", ErrFormat, name, c.Arch)
		}
	}
	// A packed matrix's products read the packed copy: its mapped bytes
	// need not stay resident beside it (as FromGGUF).
	if err := m.finish(h.release); err != nil {
		return nil, err
	}
	return m, nil
}

// release lets the pages of b go if a shard maps them (each file ignores
// bytes outside its data, such as a converted copy on the heap).
func (h *hfTensors) release(b []byte) {
	for _, f := range h.files {
		f.Release(b)
	}
}

// tensor finds name and checks its shape.
func (h *hfTensors) tensor(name string, shape ...int) (hfRef, error) {
	h.used[name] = true
	r, ok := h.byName[name]
	if !ok {
		return hfRef{}, fmt.Errorf("%w: safetensors tensor %s missing", ErrFormat, name)
	}
	if len(r.t.Shape) != len(shape) {
		return hfRef{}, fmt.Errorf("%w: safetensors tensor %s has shape %v, want %v", ErrFormat, name, r.t.Shape, shape)
	}
	for i, n := range shape {
		if r.t.Shape[i] != uint64(n) {
			return hfRef{}, fmt.Errorf("%w: safetensors tensor %s has shape %v, want %v", ErrFormat, name, r.t.Shape, shape)
		}
	}
	return r, nil
}

// matrix reads a rows x cols weight ([out, in] in Hugging Face order, which
// is ours), aliasing the map.
func (h *hfTensors) matrix(name string, rows, cols int) (kernels.Matrix, error) {
	r, err := h.tensor(name, rows, cols)
	if err != nil {
		return kernels.Matrix{}, err
	}
	data := r.f.Data(r.t)
	w := kernels.Matrix{Rows: rows, Cols: cols}
	switch r.t.DType {
	case "F32":
		w.Type, w.F32 = kernels.F32, floats(data)
	case "F16":
		w.Type, w.Raw = kernels.F16, data
	case "BF16":
		w.Type, w.Raw = kernels.BF16, data
	default:
		return kernels.Matrix{}, &UnsupportedTypeError{Tensor: name, Type: r.t.DType}
	}
	if err := w.Validate(); err != nil {
		return kernels.Matrix{}, fmt.Errorf("%w: safetensors tensor %s: %w", ErrFormat, name, err)
	}
	return w, nil
}

// vector reads a one-dimensional tensor of n values as float32 (aliased
// when F32, converted when F16 or BF16: norms and biases are small).
func (h *hfTensors) vector(name string, n int) ([]float32, error) { return h.array(name, n) }

// array reads a tensor of the given shape as float32, as vector.
func (h *hfTensors) array(name string, shape ...int) ([]float32, error) {
	r, err := h.tensor(name, shape...)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := r.f.Data(r.t)
	switch r.t.DType {
	case "F32":
		return floats(data), nil
	case "F16", "BF16":
		v := make([]float32, n)
		for i := range v {
			b := binary.LittleEndian.Uint16(data[2*i:])
			if r.t.DType == "BF16" {
				v[i] = math.Float32frombits(uint32(b) << 16)
			} else {
				v[i] = kernels.HalfToFloat(b)
			}
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: safetensors tensor %s has dtype %s; supported: F32, F16, BF16", ErrFormat, name, r.t.DType)
}
