package llama

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/gguf"
)

// FuzzPEFTConfig: decoding adapter_config.json never panics; a refusal
// wraps ErrAdapterLayout and names the file; an accepted config has a
// positive rank, a non-negative alpha and at least one target, and its
// canonical re-encoding decodes to the same configuration.
func FuzzPEFTConfig(f *testing.F) {
	if dir, err := refDirPath(); err == nil {
		if data, err := os.ReadFile(filepath.Join(dir, "tiny-llama.lora-r8.peft", peftConfigFile)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"r":4,"lora_alpha":8,"target_modules":["model.layers.0.self_attn.q_proj","o_proj","gate_proj"]}`))
	f.Add([]byte(`{"r":4,"target_modules":"q_proj"}`))
	f.Add([]byte(`{"r":1e30,"lora_alpha":-1,"target_modules":[]}`))
	f.Add([]byte(`{"peft_type":"LORA","r":8,"use_rslora":true,"layers_to_transform":null,"modules_to_save":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parsePEFTConfig(data, peftConfigFile)
		if err != nil {
			if !errors.Is(err, ErrAdapterLayout) || !strings.Contains(err.Error(), peftConfigFile) {
				t.Fatalf("error %q does not wrap ErrAdapterLayout or name the file", err)
			}
			return
		}
		if c.rank < 1 || !(c.alpha >= 0) || len(targetsOf(c.on)) == 0 {
			t.Fatalf("accepted rank %d, alpha %v, targets %v", c.rank, c.alpha, targetsOf(c.on))
		}
		var mods []string
		for k, on := range c.on {
			if on {
				mods = append(mods, loraPEFTModules[k])
			}
		}
		again, err := json.Marshal(map[string]any{"r": c.rank, "lora_alpha": c.alpha, "use_rslora": c.rsLoRA, "target_modules": mods})
		if err != nil {
			t.Fatal(err)
		}
		c2, err := parsePEFTConfig(again, peftConfigFile)
		if err != nil {
			t.Fatalf("re-encoded %s refused: %v", again, err)
		}
		if diff := cmp.Diff(c, c2, cmp.AllowUnexported(peftConfig{})); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
	})
}

// FuzzGGUFAdapter mutates small LoRA GGUFs: whatever the bytes, loading
// one onto the test model either fails with an error wrapping
// ErrAdapterLayout that names the file, or yields an adapter whose every
// pair fits the base projection and whose rank and targets the header
// check reported, and which runs a Forward step.
func FuzzGGUFAdapter(f *testing.F) {
	// A model small enough that the seeds are a few hundred bytes, which
	// keeps the fuzzer's minimisation quick.
	m, err := NewRandom(Config{Arch: "llama", Dim: 16, HiddenDim: 24, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 8, SeqLen: 4}, 3, true)
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	for i, kinds := range [][]loraKind{{loraQ, loraV}, allLoraKinds} {
		p := filepath.Join(dir, "seed.gguf")
		newTestLoRA(m, 1+i, 2, uint64(i), kinds...).writeGGUF(f, p, "llama", m, nil)
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	const file = "fuzz.gguf"
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := gguf.Parse(data)
		if err != nil {
			return // the GGUF reader has its own fuzz target
		}
		h, err := checkGGUFAdapter(gf, file)
		var a *Adapter
		if err == nil {
			_, dryErr := ggufAdapter(gf, h, file, m, AdapterInfo{}, true)
			a, err = ggufAdapter(gf, h, file, m, AdapterInfo{}, false)
			if fmt.Sprint(dryErr) != fmt.Sprint(err) {
				t.Fatalf("CheckAdapter's verdict %v differs from the load's %v", dryErr, err)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrAdapterLayout) || !strings.Contains(err.Error(), file) {
				t.Fatalf("error %q does not wrap ErrAdapterLayout or name the file", err)
			}
			return
		}
		if a.Info.Rank != h.rank || len(a.Info.Targets) == 0 || !(a.scale >= 0) {
			t.Fatalf("adapter rank %d (header %d), targets %v, scale %v", a.Info.Rank, h.rank, a.Info.Targets, a.scale)
		}
		for i := range a.layers {
			for k := range numLoraKinds {
				p := &a.layers[i][k]
				if p.a.Rows == 0 {
					continue
				}
				w := k.base(&m.Layers[i])
				if p.a.Rows != h.rank || p.a.Cols != w.Cols || p.b.Rows != w.Rows || p.b.Cols != h.rank ||
					len(p.a.F32) != p.a.Rows*p.a.Cols || len(p.b.F32) != p.b.Rows*p.b.Cols {
					t.Fatalf("layer %d %s: A %dx%d, B %dx%d do not fit %dx%d at rank %d",
						i, loraGGUFNames[k], p.a.Rows, p.a.Cols, p.b.Rows, p.b.Cols, w.Rows, w.Cols, h.rank)
				}
			}
		}
		s := m.NewState(1, nil)
		s.SetAdapter(a)
		s.Forward([]Row{{Slot: 0, Pos: 0, Token: 1, Logits: true}}, [][]float32{make([]float32, m.Config.Vocab)})
	})
}
