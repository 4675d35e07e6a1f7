package llama

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/kiln-ai/kiln/engine/safetensors"
	"github.com/kiln-ai/kiln/kernels"
)

// The files of a PEFT adapter directory.
const (
	peftConfigFile  = "adapter_config.json"
	peftWeightsFile = "adapter_model.safetensors"
)

// peftConfig is the part of adapter_config.json that decides the
// computation.
type peftConfig struct {
	rank   int
	alpha  float64
	rsLoRA bool // scale alpha/sqrt(r) instead of alpha/r
	on     [numLoraKinds]bool
}

// peftDefaultAlpha is PEFT's LoraConfig default lora_alpha, used when the
// file has none.
const peftDefaultAlpha = 8

// parsePEFTConfig decodes adapter_config.json (named file in errors). It
// accepts a plain LoRA on the projections of a decoder layer: peft_type
// LORA, r > 0, lora_alpha >= 0, target_modules a list of module names
// (q_proj ... down_proj, and a hybrid's in_proj_qkv, in_proj_z, out_proj,
// possibly as full module paths), and refuses
// what would change the computation without this engine doing it: DoRA,
// LoRA biases, fan_in_fan_out, a non-empty modules_to_save, per-layer rank or alpha
// patterns, layers_to_transform.
func parsePEFTConfig(data []byte, file string) (peftConfig, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrAdapterLayout, file}, args...)...)
	}
	var raw struct {
		PeftType          *string         `json:"peft_type"`
		R                 *float64        `json:"r"`
		Alpha             *float64        `json:"lora_alpha"`
		TargetModules     json.RawMessage `json:"target_modules"`
		FanInFanOut       bool            `json:"fan_in_fan_out"`
		Bias              *string         `json:"bias"`
		UseRSLoRA         bool            `json:"use_rslora"`
		UseDoRA           bool            `json:"use_dora"`
		ModulesToSave     json.RawMessage `json:"modules_to_save"`
		LayersToTransform json.RawMessage `json:"layers_to_transform"`
		RankPattern       map[string]any  `json:"rank_pattern"`
		AlphaPattern      map[string]any  `json:"alpha_pattern"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return peftConfig{}, bad("%w", err)
	}
	var c peftConfig
	switch {
	case raw.PeftType != nil && *raw.PeftType != "LORA":
		return c, bad("peft_type %q, want \"LORA\"", *raw.PeftType)
	case raw.R == nil:
		return c, bad("r missing")
	case !(*raw.R >= 1) || *raw.R > maxDim || *raw.R != math.Trunc(*raw.R):
		return c, bad("r = %v, want a positive integer", *raw.R)
	case raw.Alpha != nil && (!(*raw.Alpha >= 0) || *raw.Alpha > 1e6):
		return c, bad("lora_alpha = %v, want a non-negative number", *raw.Alpha)
	case raw.UseDoRA:
		return c, bad("use_dora is set; DoRA adapters are not supported")
	case raw.FanInFanOut:
		return c, bad("fan_in_fan_out is set; only Linear (out x in) weights are supported")
	case raw.Bias != nil && *raw.Bias != "none":
		return c, bad("bias %q; only \"none\" is supported", *raw.Bias)
	case !jsonNull(raw.ModulesToSave) && strings.ReplaceAll(string(raw.ModulesToSave), " ", "") != "[]":
		return c, bad("modules_to_save is set; only LoRA weights are supported")
	case !jsonNull(raw.LayersToTransform):
		return c, bad("layers_to_transform is set; an adapter of every layer is supported")
	case len(raw.RankPattern) > 0 || len(raw.AlphaPattern) > 0:
		return c, bad("rank_pattern or alpha_pattern is set; one rank and alpha per adapter is supported")
	}
	c.rank, c.alpha, c.rsLoRA = int(*raw.R), peftDefaultAlpha, raw.UseRSLoRA
	if raw.Alpha != nil {
		c.alpha = *raw.Alpha
	}
	var mods []string
	if err := json.Unmarshal(raw.TargetModules, &mods); err != nil || len(mods) == 0 {
		return c, bad("target_modules is %s, want a non-empty list of module names", strings.TrimSpace(string(raw.TargetModules)))
	}
	for _, mod := range mods {
		k, ok := peftKind(mod)
		if !ok {
			return c, bad("target module %q is not supported; supported: %s", mod, strings.Join(loraPEFTModules[:], ", "))
		}
		c.on[k] = true
	}
	return c, nil
}

// jsonNull reports whether a raw JSON value is absent or null.
func jsonNull(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	return s == "" || s == "null"
}

// peftKind maps a target module ("q_proj", or a path ending in it) to its
// kind.
func peftKind(mod string) (loraKind, bool) {
	if i := strings.LastIndexByte(mod, '.'); i >= 0 {
		mod = mod[i+1:]
	}
	for k, n := range loraPEFTModules {
		if n == mod {
			return loraKind(k), true
		}
	}
	return 0, false
}

// The roots of PEFT's tensor names: a causal LM's decoder layers sit under
// model.layers, a vision-language checkpoint's (Qwen3_5ForConditionalGeneration)
// under model.language_model.layers.
const (
	peftRoot   = "base_model.model.model."
	peftVLRoot = "base_model.model.model.language_model."
)

// peftTensorName is the name PEFT saves the A (or B) of (layer, kind)
// under, in a causal LM.
func peftTensorName(layer int, k loraKind, a bool) string {
	return peftTensorNameAt(peftRoot, layer, k, a)
}

// peftTensorNameAt is peftTensorName under root.
func peftTensorNameAt(root string, layer int, k loraKind, a bool) string {
	group := "mlp"
	switch {
	case k <= loraO:
		group = "self_attn"
	case k >= loraLinQKV:
		group = "linear_attn"
	}
	side := "B"
	if a {
		side = "A"
	}
	return fmt.Sprintf("%slayers.%d.%s.%s.lora_%s.weight", root, layer, group, loraPEFTModules[k], side)
}

// peftRootOf is the root of f's tensor names: peftVLRoot when any tensor is
// under it, peftRoot otherwise.
func peftRootOf(f *safetensors.File) string {
	for _, t := range f.Tensors {
		if strings.HasPrefix(t.Name, peftVLRoot) {
			return peftVLRoot
		}
	}
	return peftRoot
}

// readPEFTConfig reads and parses dir's adapter_config.json.
func readPEFTConfig(dir string) (peftConfig, error) {
	data, err := os.ReadFile(filepath.Join(dir, peftConfigFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return peftConfig{}, fmt.Errorf("%w: %s: %s missing (not a PEFT adapter directory)", ErrAdapterLayout, dir, peftConfigFile)
		}
		return peftConfig{}, fmt.Errorf("llama: adapter: %w", err)
	}
	return parsePEFTConfig(data, peftConfigFile)
}

func inspectPEFT(dir string) (AdapterInfo, error) {
	c, err := readPEFTConfig(dir)
	if err != nil {
		return AdapterInfo{}, err
	}
	n, sum, err := hashFile(filepath.Join(dir, peftWeightsFile))
	if err != nil {
		return AdapterInfo{}, err
	}
	return AdapterInfo{Format: "peft", Rank: c.rank, Alpha: c.alpha, Targets: targetsOf(c.on), Bytes: n, SHA256: sum}, nil
}

// loadPEFT reads a PEFT directory for m. Every tensor of the weights file
// must be the lora_A or lora_B of a targeted module of one of m's layers
// that has the module; B's Q/K rows are permuted for a llama GGUF base and
// the value heads tiled for a hybrid's GGUF base.
func loadPEFT(dir string, m *Model, dry bool) (*Adapter, error) {
	c, err := readPEFTConfig(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, peftWeightsFile)
	n, sum, err := hashFile(path)
	if err != nil {
		return nil, err
	}
	f, err := safetensors.Open(path)
	if err != nil {
		if errors.Is(err, safetensors.ErrFormat) {
			err = fmt.Errorf("%w: %s: %w", ErrAdapterLayout, peftWeightsFile, err)
		}
		return nil, err
	}
	defer func() { _ = f.Close() }()
	a := newAdapter(m, AdapterInfo{Format: "peft", Rank: c.rank, Alpha: c.alpha, Bytes: n, SHA256: sum})
	root := peftRootOf(f)
	known, err := a.setPEFT(f, root, c.on, dry)
	if err != nil {
		return nil, err
	}
	for _, t := range f.Tensors {
		if !known[t.Name] {
			return nil, fmt.Errorf("%w: %s: tensor %s is not the lora_A or lora_B of a target module of the base model's %d layers",
				ErrAdapterLayout, peftWeightsFile, t.Name, m.Config.Layers)
		}
	}
	if err := a.done(peftWeightsFile, func(l int, k loraKind) string { return peftTensorNameAt(root, l, k, true) }); err != nil {
		return nil, err
	}
	if c.rsLoRA {
		a.scale = float32(c.alpha / math.Sqrt(float64(c.rank)))
	}
	if !dry {
		a.reorder(false, false)
	}
	return a, nil
}

// setPEFT reads the pairs of the kinds on from f (names under root) into
// a, in every layer that has the kind's projection, and returns the names
// it read. A pair of a kind in a layer without it is an error naming the
// tensor.
func (a *Adapter) setPEFT(f *safetensors.File, root string, on [numLoraKinds]bool, dry bool) (map[string]bool, error) {
	known := map[string]bool{}
	for l := range a.model.Config.Layers {
		for k := range numLoraKinds {
			if !on[k] {
				continue
			}
			nameA, nameB := peftTensorNameAt(root, l, k, true), peftTensorNameAt(root, l, k, false)
			if k.base(&a.model.Layers[l]) == nil {
				for _, name := range []string{nameA, nameB} {
					if _, ok := f.Tensor(name); ok {
						return nil, a.absent(peftWeightsFile, l, k, name)
					}
				}
				continue
			}
			known[nameA], known[nameB] = true, true
			ma, err := peftF32(f, nameA, dry)
			if err != nil {
				return nil, err
			}
			mb, err := peftF32(f, nameB, dry)
			if err != nil {
				return nil, err
			}
			if err := a.set(peftWeightsFile, l, k, ma, mb, nameA, nameB); err != nil {
				return nil, err
			}
		}
	}
	return known, nil
}

// peftF32 reads a two-dimensional F32, F16 or BF16 tensor as a float32
// matrix on the heap; dry checks the tensor and returns its shape only.
func peftF32(f *safetensors.File, name string, dry bool) (kernels.Matrix, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return kernels.Matrix{}, fmt.Errorf("%w: %s: tensor %s missing", ErrAdapterLayout, peftWeightsFile, name)
	}
	if len(t.Shape) != 2 || t.Shape[0] == 0 || t.Shape[1] == 0 {
		return kernels.Matrix{}, fmt.Errorf("%w: %s: tensor %s has shape %v, want two non-zero dimensions", ErrAdapterLayout, peftWeightsFile, name, t.Shape)
	}
	rows, cols := int(t.Shape[0]), int(t.Shape[1])
	if t.DType != "F32" && t.DType != "F16" && t.DType != "BF16" {
		return kernels.Matrix{}, fmt.Errorf("%w: %s: tensor %s has dtype %s; supported: F32, F16, BF16", ErrAdapterLayout, peftWeightsFile, name, t.DType)
	}
	if dry {
		return kernels.Matrix{Rows: rows, Cols: cols}, nil
	}
	data := f.Data(t)
	out := make([]float32, rows*cols)
	switch t.DType {
	case "F32":
		copy(out, floats(data))
	case "F16", "BF16":
		for i := range out {
			b := binary.LittleEndian.Uint16(data[2*i:])
			if t.DType == "BF16" {
				out[i] = math.Float32frombits(uint32(b) << 16)
			} else {
				out[i] = kernels.HalfToFloat(b)
			}
		}
	}
	return f32Matrix(rows, cols, out), nil
}
