package llama

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/safetensors"
)

// testLoRA is an adapter's weights in the base model's row order: per
// layer and kind, A (r x in) and B (out x r) row-major; nil when the kind
// is not targeted. root is the root of its PEFT tensor names (peftRoot
// when empty).
type testLoRA struct {
	rank  int
	alpha float32
	a, b  [][numLoraKinds][]float32
	root  string
}

// adapterTestConfig is a small llama shape with grouped-query attention and
// a feed-forward wider than the residual, so that every projection has its
// own shape.
func adapterTestConfig() Config {
	return Config{Arch: "llama", Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 32}
}

// newAdapterTestModel is a random model of adapterTestConfig.
func newAdapterTestModel(t testing.TB) *Model {
	t.Helper()
	m, err := NewRandom(adapterTestConfig(), 7, true)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newTestLoRA draws an adapter of rank r for m targeting kinds in every
// layer that has them, with weights large enough to move the logits
// visibly.
func newTestLoRA(m *Model, r int, alpha float32, seed uint64, kinds ...loraKind) *testLoRA {
	rng := rand.New(rand.NewPCG(seed, 1))
	l := &testLoRA{rank: r, alpha: alpha, a: make([][numLoraKinds][]float32, m.Config.Layers), b: make([][numLoraKinds][]float32, m.Config.Layers)}
	draw := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.08)
		}
		return v
	}
	for i := range m.Layers {
		for _, k := range kinds {
			w := k.base(&m.Layers[i])
			if w == nil {
				continue
			}
			l.a[i][k] = draw(r * w.Cols)
			l.b[i][k] = draw(w.Rows * r)
		}
	}
	return l
}

// writeGGUF writes l as a llama.cpp LoRA GGUF of arch for m; edit may
// change the writer before it writes (keys, extra tensors).
func (l *testLoRA) writeGGUF(t testing.TB, path, arch string, m *Model, edit func(*gguf.Writer)) {
	t.Helper()
	w := gguf.NewWriter()
	w.SetString("general.architecture", arch)
	w.SetString("general.type", "adapter")
	w.SetString("adapter.type", "lora")
	w.SetFloat32("adapter.lora.alpha", l.alpha)
	for i := range l.a {
		for k := range numLoraKinds {
			if l.a[i][k] == nil {
				continue
			}
			base := k.base(&m.Layers[i])
			w.AddTensor(ggufLoraName(i, k, true), []uint64{uint64(base.Cols), uint64(l.rank)}, gguf.TypeF32, f32Bytes(l.a[i][k]))
			w.AddTensor(ggufLoraName(i, k, false), []uint64{uint64(l.rank), uint64(base.Rows)}, gguf.TypeF32, f32Bytes(l.b[i][k]))
		}
	}
	if edit != nil {
		edit(w)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// peftConfigJSON is an adapter_config.json for l, with edit applied to the
// decoded object before it is encoded.
func (l *testLoRA) peftConfigJSON(t testing.TB, edit func(map[string]any)) []byte {
	t.Helper()
	var mods []string
	for k := range numLoraKinds {
		for i := range l.a {
			if l.a[i][k] != nil {
				mods = append(mods, loraPEFTModules[k])
				break
			}
		}
	}
	c := map[string]any{
		"peft_type": "LORA", "r": l.rank, "lora_alpha": l.alpha, "target_modules": mods,
		"bias": "none", "fan_in_fan_out": false, "use_rslora": false, "use_dora": false,
		"modules_to_save": nil, "layers_to_transform": nil,
	}
	if edit != nil {
		edit(c)
	}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writePEFT writes l as a PEFT directory for m: B's Q/K rows go back to
// Hugging Face order when m is a llama in llama.cpp's order (as
// convert_lora_to_gguf.py's inverse). editConfig changes
// adapter_config.json; editTensors the list of tensors written.
func (l *testLoRA) writePEFT(t testing.TB, dir string, m *Model, editConfig func(map[string]any), editTensors func([]safetensors.Entry, [][]byte) ([]safetensors.Entry, [][]byte)) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, peftConfigFile), l.peftConfigJSON(t, editConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	heads := [numLoraKinds]int{loraQ: m.Config.Heads, loraK: m.Config.KVHeads}
	root := cmp.Or(l.root, peftRoot)
	var entries []safetensors.Entry
	var data [][]byte
	for i := range l.a {
		for k := range numLoraKinds {
			if l.a[i][k] == nil {
				continue
			}
			base := k.base(&m.Layers[i])
			b := l.b[i][k]
			if heads[k] > 0 && loraRowOrder(false, m) == +1 {
				b = permuteRows(b, heads[k], l.rank, -1)
			}
			entries = append(entries,
				safetensors.Entry{Name: peftTensorNameAt(root, i, k, true), DType: "F32", Shape: []uint64{uint64(l.rank), uint64(base.Cols)}},
				safetensors.Entry{Name: peftTensorNameAt(root, i, k, false), DType: "F32", Shape: []uint64{uint64(base.Rows), uint64(l.rank)}})
			data = append(data, f32Bytes(l.a[i][k]), f32Bytes(b))
		}
	}
	if editTensors != nil {
		entries, data = editTensors(entries, data)
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, entries, data, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, peftWeightsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// merged returns a copy of m whose targeted projections are
// W + (alpha/r)·B·A, computed in float64: the model the adapter must be
// equivalent to. m's weights must be F32.
func (l *testLoRA) merged(m *Model) *Model {
	out := *m
	out.closer = nil
	out.Layers = append([]Layer(nil), m.Layers...)
	scale := float64(l.alpha) / float64(l.rank)
	for i := range out.Layers {
		if d := out.Layers[i].Lin; d != nil { // shared with m otherwise
			c := *d
			out.Layers[i].Lin = &c
		}
		for k := range numLoraKinds {
			if l.a[i][k] == nil {
				continue
			}
			w := k.base(&out.Layers[i])
			f := make([]float32, len(w.F32))
			for row := range w.Rows {
				for col := range w.Cols {
					var s float64
					for j := range l.rank {
						s += float64(l.b[i][k][row*l.rank+j]) * float64(l.a[i][k][j*w.Cols+col])
					}
					f[row*w.Cols+col] = float32(float64(w.F32[row*w.Cols+col]) + scale*s)
				}
			}
			w.F32 = f
		}
	}
	if m.Tied() {
		out.Output = &out.Embed
	}
	return &out
}

// hfLayout returns a copy of a llama model in llama.cpp's Q/K row order
// (RopeNorm) with the rows of WQ and WK put back in Hugging Face order and
// RopeNeoX: the same computation, in the layout of a Hugging Face
// directory. m's Q/K weights must be F32.
func hfLayout(m *Model) *Model {
	out := *m
	out.closer = nil
	out.Config.Rope = RopeNeoX
	out.Layers = append([]Layer(nil), m.Layers...)
	for i := range out.Layers {
		l := &out.Layers[i]
		l.WQ.F32 = permuteRows(l.WQ.F32, m.Config.Heads, l.WQ.Cols, -1)
		l.WK.F32 = permuteRows(l.WK.F32, m.Config.KVHeads, l.WK.Cols, -1)
	}
	if m.Tied() {
		out.Output = &out.Embed
	}
	return &out
}
