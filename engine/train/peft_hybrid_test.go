package train

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/safetensors"
)

// TestWritePEFTHybrid writes an adapter of every module for a hybrid, HF
// and tiled: each layer has the tensors of its own projections only
// (self_attn.* on the attention layer, linear_attn.* on the others, mlp.*
// everywhere), and a tiled base's value heads come out in HF order, the
// tiled head j at HF head (j % KeyHeads)·(ValueHeads/KeyHeads) + j /
// KeyHeads (written here independently of hfValueHeads).
func TestWritePEFTHybrid(t *testing.T) {
	for _, tiled := range []bool{false, true} {
		c := hybridConfig(tiled)
		ls := c.Linear
		a, err := NewAdapter(c, 2, 4, everyModule(), 3)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		a.w.each(func(p []float32) {
			for i := range p {
				p[i] = float32(k)
				k++
			}
		})
		dir := filepath.Join(t.TempDir(), "out")
		if err := WritePEFT(dir, a, "kiln-test"); err != nil {
			t.Fatal(err)
		}
		f, err := safetensors.Open(filepath.Join(dir, PEFTWeightsFile))
		if err != nil {
			t.Fatal(err)
		}
		hf := func(j int) int {
			if !tiled {
				return j
			}
			return []int{0, 2, 1, 3}[j] // 2 key heads, 4 value heads
		}
		dv, vd := ls.ValueDim, ls.VDim()
		for l := range c.Layers {
			for m := range numModules {
				_, okA := f.Tensor(peftName(l, m, "A"))
				if okA != hasModule(c, l, m) {
					t.Errorf("layer %d %v: tensor present %v, want %v", l, m, okA, hasModule(c, l, m))
				}
				if !okA {
					continue
				}
				tA, _ := f.Tensor(peftName(l, m, "A"))
				tB, _ := f.Tensor(peftName(l, m, "B"))
				gotA, gotB := f32s(f.Data(tA)), f32s(f.Data(tB))
				wantA, wantB := append([]float32(nil), a.A(l, m)...), append([]float32(nil), a.B(l, m)...)
				r := a.Rank
				for j := range ls.ValueHeads {
					switch m {
					case ModLinQKV, ModLinZ:
						off := 0
						if m == ModLinQKV {
							off = 2 * ls.QKDim()
						}
						copy(wantB[(off+hf(j)*dv)*r:(off+hf(j)*dv+dv)*r], a.B(l, m)[(off+j*dv)*r:(off+j*dv+dv)*r])
					case ModLinOut:
						for k := range r {
							copy(wantA[k*vd+hf(j)*dv:k*vd+hf(j)*dv+dv], a.A(l, m)[k*vd+j*dv:k*vd+j*dv+dv])
						}
					}
				}
				if d := cmp.Diff(wantA, gotA); d != "" {
					t.Errorf("tiled %v layer %d %v A (-want +got)\n%s", tiled, l, m, d)
				}
				if d := cmp.Diff(wantB, gotB); d != "" {
					t.Errorf("tiled %v layer %d %v B (-want +got)\n%s", tiled, l, m, d)
				}
			}
		}
		_ = f.Close()
	}
}
