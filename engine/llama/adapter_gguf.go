package llama

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/kernels"
)

// ggufAdapterHeader is what a LoRA GGUF's metadata and tensor list say,
// checked by checkGGUFAdapter before any weight is read.
type ggufAdapterHeader struct {
	arch  string
	rank  int
	alpha float64
	on    [numLoraKinds]bool
	// tensors by (layer, kind): the indices of lora_a and lora_b in
	// f.Tensors, -1 when absent.
	pairs map[[2]int][2]int
}

// checkGGUFAdapter checks that f (named file in errors) is a llama.cpp LoRA
// adapter: general.type "adapter", adapter.type "lora", a
// general.architecture, every tensor a "blk.N.KIND.weight.lora_a|b" of a
// projection kind this engine applies, two-dimensional, in pairs, all of
// one rank. adapter.lora.alpha is optional: llama.cpp applies an adapter
// without one at scale 1, which alpha = rank gives.
func checkGGUFAdapter(f *gguf.File, file string) (ggufAdapterHeader, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrAdapterLayout, file}, args...)...)
	}
	var h ggufAdapterHeader
	if t, _ := f.String("general.type"); t != "adapter" {
		return h, bad("general.type is %q, want \"adapter\" (a model file, not a LoRA adapter?)", t)
	}
	if t, _ := f.String("adapter.type"); t != "lora" {
		return h, bad("adapter.type is %q, want \"lora\"", t)
	}
	h.arch, _ = f.String("general.architecture")
	if h.arch == "" {
		return h, bad("general.architecture missing")
	}
	h.pairs = map[[2]int][2]int{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		layer, k, side, ok := splitLoraName(t.Name)
		if !ok {
			return h, bad("tensor %s is not a LoRA tensor of a projection this engine applies (blk.N.{%s}.weight.lora_a|lora_b)",
				t.Name, strings.Join(loraGGUFNames[:], ","))
		}
		if len(t.Dims) != 2 || t.Dims[0] == 0 || t.Dims[1] == 0 || t.Dims[0] > maxDim || t.Dims[1] > maxDim {
			return h, bad("tensor %s has shape %v, want two non-zero dimensions", t.Name, t.Dims)
		}
		// lora_a is ne [in, r]; lora_b is ne [r, out].
		r := t.Dims[1]
		if side == 'b' {
			r = t.Dims[0]
		}
		if h.rank == 0 {
			h.rank = int(r)
		} else if int(r) != h.rank {
			return h, bad("tensor %s has rank %d, other tensors %d (one rank per adapter is supported)", t.Name, r, h.rank)
		}
		key := [2]int{layer, int(k)}
		p, seen := h.pairs[key]
		if !seen {
			p = [2]int{-1, -1}
		}
		s := 0
		if side == 'b' {
			s = 1
		}
		if p[s] >= 0 {
			return h, bad("tensor %s appears twice", t.Name)
		}
		p[s] = i
		h.pairs[key] = p
		h.on[k] = true
	}
	if len(h.pairs) == 0 {
		return h, bad("no LoRA tensors")
	}
	for _, key := range sortedPairs(h.pairs) {
		p := h.pairs[key]
		if p[0] < 0 || p[1] < 0 {
			return h, bad("tensor %s missing (its other half is present)", ggufLoraName(key[0], loraKind(key[1]), p[0] < 0))
		}
	}
	h.alpha = float64(h.rank)
	if v, ok := f.Value("adapter.lora.alpha"); ok {
		a, ok := f.Float("adapter.lora.alpha")
		if !ok || !(a >= 0) || a > 1e6 {
			return h, bad("adapter.lora.alpha is %v, want a non-negative number", gguf.FormatValue(v, 4))
		}
		if a > 0 {
			h.alpha = a
		}
	}
	return h, nil
}

// ggufLoraName is the GGUF name of one half of a pair.
func ggufLoraName(layer int, k loraKind, a bool) string {
	side := "b"
	if a {
		side = "a"
	}
	return fmt.Sprintf("blk.%d.%s.weight.lora_%s", layer, loraGGUFNames[k], side)
}

// sortedPairs lists the (layer, kind) keys in order, so that errors name
// the first offending tensor deterministically.
func sortedPairs(m map[[2]int][2]int) [][2]int {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(x, y [2]int) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
	return keys
}

// openGGUFAdapter opens path and checks its header.
func openGGUFAdapter(path string) (*gguf.File, ggufAdapterHeader, error) {
	file := filepath.Base(path)
	f, err := gguf.Open(path)
	if err != nil {
		if errors.Is(err, gguf.ErrFormat) {
			err = fmt.Errorf("%w: %s: %w", ErrAdapterLayout, file, err)
		}
		return nil, ggufAdapterHeader{}, err
	}
	h, err := checkGGUFAdapter(f, file)
	if err != nil {
		_ = f.Close()
		return nil, h, err
	}
	return f, h, nil
}

func inspectGGUFAdapter(path string) (AdapterInfo, error) {
	f, h, err := openGGUFAdapter(path)
	if err != nil {
		return AdapterInfo{}, err
	}
	_ = f.Close()
	n, sum, err := hashFile(path)
	if err != nil {
		return AdapterInfo{}, err
	}
	return AdapterInfo{Format: "gguf", Rank: h.rank, Alpha: h.alpha, Targets: targetsOf(h.on), Arch: h.arch, Bytes: n, SHA256: sum}, nil
}

// loadGGUFAdapter reads a llama.cpp LoRA GGUF for m.
func loadGGUFAdapter(path string, m *Model, dry bool) (*Adapter, error) {
	f, h, err := openGGUFAdapter(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	n, sum, err := hashFile(path)
	if err != nil {
		return nil, err
	}
	return ggufAdapter(f, h, filepath.Base(path), m, AdapterInfo{Bytes: n, SHA256: sum}, dry)
}

// ggufAdapter builds the adapter of a checked LoRA GGUF for m (info
// carries the file's size and hash): its architecture must be m's, its
// tensors are converted to float32 (any type the kernels dequantize), and
// for a base in Hugging Face order a llama adapter's Q/K lora_b rows are
// un-permuted and a hybrid's value heads put back in grouped order
// (adapter_order.go).
func ggufAdapter(f *gguf.File, h ggufAdapterHeader, file string, m *Model, info AdapterInfo, dry bool) (*Adapter, error) {
	if h.arch != m.Config.Arch {
		return nil, fmt.Errorf("%w: %s: general.architecture is %q, the base model is %q", ErrAdapterLayout, file, h.arch, m.Config.Arch)
	}
	info.Format, info.Rank, info.Alpha, info.Arch = "gguf", h.rank, h.alpha, h.arch
	a := newAdapter(m, info)
	for _, key := range sortedPairs(h.pairs) {
		p := h.pairs[key]
		layer, k := key[0], loraKind(key[1])
		ta, tb := &f.Tensors[p[0]], &f.Tensors[p[1]]
		if layer >= m.Config.Layers {
			return nil, fmt.Errorf("%w: %s: tensor %s: the base model has %d layers", ErrAdapterLayout, file, ta.Name, m.Config.Layers)
		}
		// Shapes first, so that nothing is converted for a misfit.
		if err := a.check(file, layer, k, int(ta.Dims[1]), int(ta.Dims[0]), int(tb.Dims[1]), int(tb.Dims[0]), ta.Name, tb.Name); err != nil {
			return nil, err
		}
		ma, err := ggufF32(f, ta, file, dry)
		if err != nil {
			return nil, err
		}
		mb, err := ggufF32(f, tb, file, dry)
		if err != nil {
			return nil, err
		}
		if err := a.set(file, layer, k, ma, mb, ta.Name, tb.Name); err != nil {
			return nil, err
		}
	}
	if err := a.done(file, func(l int, k loraKind) string { return ggufLoraName(l, k, true) }); err != nil {
		return nil, err
	}
	if !dry {
		a.reorder(h.arch == "llama", true)
	}
	return a, nil
}

// ggufF32 reads a two-dimensional tensor (ne [cols, rows]) as a float32
// matrix held on the heap, so that the file can be closed; dry checks the
// tensor and returns its shape only.
func ggufF32(f *gguf.File, t *gguf.TensorInfo, file string, dry bool) (kernels.Matrix, error) {
	rows, cols := int(t.Dims[1]), int(t.Dims[0])
	data, err := f.TensorData(t)
	if err != nil {
		return kernels.Matrix{}, fmt.Errorf("%w: %s: tensor %s: %w", ErrAdapterLayout, file, t.Name, err)
	}
	typ, ok := matrixType(t.Type)
	if !ok {
		return kernels.Matrix{}, fmt.Errorf("%w: %s: tensor %s has type %s; supported: %s",
			ErrAdapterLayout, file, t.Name, gguf.TypeName(t.Type), SupportedTypes)
	}
	w := kernels.Matrix{Type: typ, Rows: rows, Cols: cols, Raw: data}
	if typ == kernels.F32 {
		w.Raw, w.F32 = nil, floats(data)
	}
	if err := w.Validate(); err != nil {
		return kernels.Matrix{}, fmt.Errorf("%w: %s: tensor %s: %w", ErrAdapterLayout, file, t.Name, err)
	}
	if dry {
		return kernels.Matrix{Rows: rows, Cols: cols}, nil
	}
	out := make([]float32, rows*cols)
	for r := range rows {
		kernels.DequantRow(out[r*cols:(r+1)*cols], &w, r)
	}
	return f32Matrix(rows, cols, out), nil
}
