package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/safetensors"
)

// PEFT file names inside an adapter directory.
const (
	PEFTConfigFile  = "adapter_config.json"
	PEFTWeightsFile = "adapter_model.safetensors"
)

// peftConfig is adapter_config.json as PEFT writes it for a LoRA.
type peftConfig struct {
	BaseModel       string   `json:"base_model_name_or_path"`
	PEFTType        string   `json:"peft_type"`
	TaskType        string   `json:"task_type"`
	R               int      `json:"r"`
	LoraAlpha       float64  `json:"lora_alpha"`
	LoraDropout     float64  `json:"lora_dropout"`
	TargetModules   []string `json:"target_modules"`
	Bias            string   `json:"bias"`
	FanInFanOut     bool     `json:"fan_in_fan_out"`
	InferenceMode   bool     `json:"inference_mode"`
	UseRSLora       bool     `json:"use_rslora"`
	UseDoRA         bool     `json:"use_dora"`
	ModulesToSave   []string `json:"modules_to_save"`
	LayersTransform []int    `json:"layers_to_transform"`
}

// peftName is the PEFT tensor name of matrix kind ("A" or "B") of
// projection m of layer l.
func peftName(l int, m Module, kind string) string {
	return fmt.Sprintf("base_model.model.model.layers.%d.%s.lora_%s.weight", l, m.PEFTPath(), kind)
}

// WritePEFT writes a in the PEFT layout into dir (created if missing):
// adapter_config.json and adapter_model.safetensors with F32 lora_A (r x
// in) and lora_B (out x r) per targeted projection, named as PEFT names
// them (on a hybrid, each layer's pairs are those the layer has:
// linear_attn.* on Gated DeltaNet layers, self_attn.* on attention
// layers). For a model with RopeNorm (the interleaved Q/K rows of GGUF llama
// files) the rows of the q and k B matrices are put back in Hugging Face
// order, the inverse of the permutation the loader applies, so that
// llama.LoadAdapter reads back exactly the trained adapter. base names the
// base model in the config. The files are written to temporary names and
// renamed, so a reader never sees half an adapter.
func WritePEFT(dir string, a *Adapter, base string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("train: write adapter: %w", err)
	}
	cfg := peftConfig{
		BaseModel: base, PEFTType: "LORA", TaskType: "CAUSAL_LM", R: a.Rank, LoraAlpha: a.Alpha,
		Bias: "none", InferenceMode: true,
	}
	for _, m := range a.Targets {
		cfg.TargetModules = append(cfg.TargetModules, m.TargetName())
	}
	js, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("train: write adapter config: %w", err)
	}
	var entries []safetensors.Entry
	var data [][]byte
	c := a.config
	for l := range a.w.layers {
		for _, m := range a.Targets {
			p := a.w.layers[l][m]
			if p.A == nil {
				continue // not a projection of this layer
			}
			pa, b := p.A, p.B
			if c.Arch == "llama" && c.Rope == llama.RopeNorm && (m == ModQ || m == ModK) {
				b = hfRows(b, p.out/c.HeadDim(), c.HeadDim(), a.Rank)
			}
			if c.Linear.Tiled {
				pa, b = hfValueHeads(c.Linear, m, pa, b, a.Rank)
			}
			entries = append(entries,
				safetensors.Entry{Name: peftName(l, m, "A"), DType: "F32", Shape: []uint64{uint64(a.Rank), uint64(p.in)}},
				safetensors.Entry{Name: peftName(l, m, "B"), DType: "F32", Shape: []uint64{uint64(p.out), uint64(a.Rank)}})
			data = append(data, f32Bytes(pa), f32Bytes(b))
		}
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, entries, data, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("train: write adapter weights: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, PEFTWeightsFile), buf.Bytes()); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, PEFTConfigFile), append(js, '\n'))
}

// hfValueHeads returns A and B of projection m of a linear layer whose
// value heads are tiled (GGUF: value head j reads key head j % KeyHeads)
// with the value heads in Hugging Face's grouped order: the rows of
// in_proj_qkv's values and of in_proj_z in B, the columns of out_proj in
// A. Tiled head j is HF head (j % KeyHeads)·(ValueHeads/KeyHeads) +
// j / KeyHeads. Other projections are returned as they are.
func hfValueHeads(s llama.LinearShape, m Module, a, b []float32, rank int) ([]float32, []float32) {
	hf := func(j int) int { return (j%s.KeyHeads)*(s.ValueHeads/s.KeyHeads) + j/s.KeyHeads }
	dv := s.ValueDim
	switch m {
	case ModLinQKV, ModLinZ:
		off := 0
		if m == ModLinQKV {
			off = 2 * s.QKDim()
		}
		out := slices.Clone(b)
		for j := range s.ValueHeads {
			src, dst := (off+j*dv)*rank, (off+hf(j)*dv)*rank
			copy(out[dst:dst+dv*rank], b[src:src+dv*rank])
		}
		return a, out
	case ModLinOut:
		in := s.VDim()
		out := slices.Clone(a)
		for r := range rank {
			for j := range s.ValueHeads {
				copy(out[r*in+hf(j)*dv:r*in+(hf(j)+1)*dv], a[r*in+j*dv:r*in+(j+1)*dv])
			}
		}
		return out, b
	}
	return a, b
}

// hfRows returns the rows of b (heads x hd rows of rank values) in Hugging
// Face order: model row h·hd + 2j + s is HF row h·hd + (hd/2)·s + j.
func hfRows(b []float32, heads, hd, rank int) []float32 {
	out := make([]float32, len(b))
	half := hd / 2
	for h := range heads {
		for j := range half {
			for s := range 2 {
				src := (h*hd + 2*j + s) * rank
				dst := (h*hd + half*s + j) * rank
				copy(out[dst:dst+rank], b[src:src+rank])
			}
		}
	}
	return out
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// writeAtomic writes data to path through a temporary file in the same
// directory.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("train: write %s: %w", path, err)
	}
	werr := tmp.Chmod(0o644)
	if werr == nil {
		_, werr = tmp.Write(data)
	}
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("train: write %s: %w", path, werr)
	}
	return nil
}
