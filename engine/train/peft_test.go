package train

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/safetensors"
	"github.com/kiln-ai/kiln/internal/testshared"
)

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// ggufRows is the loader's permutation (HF row h·hd + (hd/2)·s + j is
// model row h·hd + 2j + s), written independently of hfRows.
func ggufRows(b []float32, heads, hd, rank int) []float32 {
	out := make([]float32, len(b))
	for h := range heads {
		for r := range hd {
			s, j := r/(hd/2), r%(hd/2)
			copy(out[(h*hd+2*j+s)*rank:][:rank], b[(h*hd+r)*rank:][:rank])
		}
	}
	return out
}

// TestWritePEFT writes an adapter for each rope style and reads the files
// back: the config's fields, every tensor's name, shape and values, with
// q and k B rows in HF order for a RopeNorm model and untouched otherwise.
func TestWritePEFT(t *testing.T) {
	for _, rope := range []llama.RopeStyle{llama.RopeNorm, llama.RopeNeoX} {
		t.Run(rope.String(), func(t *testing.T) {
			c := llama.Config{Arch: "llama", Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 29, SeqLen: 64, Rope: rope}
			a, err := NewAdapter(c, 4, 8, allModules(), 3)
			if err != nil {
				t.Fatal(err)
			}
			a.w.each(func(p []float32) {
				for i := range p {
					p[i] = float32(i%13) - 6 + float32(len(p)%7)/10
				}
			})
			dir := filepath.Join(t.TempDir(), "out")
			if err := WritePEFT(dir, a, "kiln-test"); err != nil {
				t.Fatal(err)
			}
			js, err := os.ReadFile(filepath.Join(dir, PEFTConfigFile))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(js, &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]any{
				"peft_type": "LORA", "r": 4.0, "lora_alpha": 8.0, "base_model_name_or_path": "kiln-test",
				"target_modules": []any{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"},
			} {
				if d := cmp.Diff(want, got[k]); d != "" {
					t.Errorf("%s: (-want +got)\n%s", k, d)
				}
			}
			f, err := safetensors.Open(filepath.Join(dir, PEFTWeightsFile))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			for l := range c.Layers {
				for _, m := range allModules() {
					out, in := moduleShape(c, m)
					for _, kind := range []string{"A", "B"} {
						ts, ok := f.Tensor(peftName(l, m, kind))
						if !ok {
							t.Fatalf("%s missing", peftName(l, m, kind))
						}
						want, shape := a.A(l, m), []uint64{4, uint64(in)}
						if kind == "B" {
							want, shape = a.B(l, m), []uint64{uint64(out), 4}
						}
						vals := f32s(f.Data(ts))
						if kind == "B" && rope == llama.RopeNorm && (m == ModQ || m == ModK) {
							vals = ggufRows(vals, out/c.HeadDim(), c.HeadDim(), 4)
						}
						if d := cmp.Diff(shape, ts.Shape); d != "" {
							t.Errorf("%s shape (-want +got)\n%s", ts.Name, d)
						}
						if d := cmp.Diff(want, vals); d != "" {
							t.Errorf("%s values (-want +got)\n%s", ts.Name, d)
						}
					}
				}
			}
		})
	}
}

// TestHFRowsMatchesReference converts the reference GGUF LoRA's q B
// matrices to HF order and compares them with the PEFT adapter the same
// weights came from (both written by llama.cpp's converter's inputs).
func TestHFRowsMatchesReference(t *testing.T) {
	g, err := gguf.Open(testshared.Require(t, "models", "ref", "tiny-llama.lora-r8.F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	p, err := safetensors.Open(testshared.Require(t, "models", "ref", "tiny-llama.lora-r8.peft", PEFTWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	for l := range 2 {
		ti, ok := g.Tensor(fmtName("blk.%d.attn_q.weight.lora_b", l))
		if !ok {
			t.Fatal("reference lora_b missing")
		}
		raw, err := g.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		ts, ok := p.Tensor(peftName(l, ModQ, "B"))
		if !ok {
			t.Fatal("reference PEFT lora_B missing")
		}
		if d := cmp.Diff(f32s(p.Data(ts)), hfRows(f32s(raw), 4, 64, 8)); d != "" {
			t.Errorf("layer %d: hfRows(GGUF lora_b) differs from PEFT lora_B (-want +got)\n%s", l, d)
		}
	}
}
