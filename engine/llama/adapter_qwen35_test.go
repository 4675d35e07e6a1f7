package llama

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/safetensors"
	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/kernels"
)

// qwen35LoraKinds is every kind a Qwen3.5 adapter may target: the
// attention kinds on its full-attention layers, the Gated DeltaNet kinds on
// its linear layers, the feed-forward kinds on all.
var qwen35LoraKinds = []loraKind{loraQ, loraK, loraV, loraO, loraGate, loraUp, loraDown, loraLinQKV, loraLinZ, loraLinOut}

// qwen35Bases opens the tiny Qwen3.5 as a Hugging Face F32 directory
// (grouped value heads) and as its F32 GGUF (tiled value heads).
func qwen35Bases(t *testing.T) (hf, gg *Model) {
	t.Helper()
	testshared.Require(t, "models", "ref", "tiny-qwen35.hf", "config.json")
	testshared.Require(t, "models", "ref", "tiny-qwen35.F32.gguf")
	hf, gg = openRef(t, "tiny-qwen35.hf").Model, openRef(t, "tiny-qwen35.F32.gguf").Model
	if hf.Config.Linear.Tiled || !gg.Config.Linear.Tiled || hf.Config.Linear.KeyHeads == hf.Config.Linear.ValueHeads {
		t.Fatalf("linear shapes %+v and %+v: want grouped HF, tiled GGUF and more value heads than key heads", hf.Config.Linear, gg.Config.Linear)
	}
	return hf, gg
}

// tiledHead is the Hugging Face value head that GGUF value head j holds,
// written out from the converter (README-qwen35.md, step 4) rather than
// taken from the code under test.
func tiledHead(s LinearShape, j int) int {
	return (j%s.KeyHeads)*(s.ValueHeads/s.KeyHeads) + j/s.KeyHeads
}

// tileRows returns b (rows of cols values) with its value-head rows, from
// row first on, in GGUF's tiled order.
func tileRows(b []float32, cols, first int, s LinearShape) []float32 {
	out := slices.Clone(b)
	for j := range s.ValueHeads {
		for i := range s.ValueDim {
			dst, src := first+j*s.ValueDim+i, first+tiledHead(s, j)*s.ValueDim+i
			copy(out[dst*cols:(dst+1)*cols], b[src*cols:(src+1)*cols])
		}
	}
	return out
}

// tileCols returns a (rows of VDim values) with its columns in GGUF's
// tiled value-head order.
func tileCols(a []float32, s LinearShape) []float32 {
	out := slices.Clone(a)
	w := s.VDim()
	for row := 0; row < len(a); row += w {
		for j := range s.ValueHeads {
			for i := range s.ValueDim {
				out[row+j*s.ValueDim+i] = a[row+tiledHead(s, j)*s.ValueDim+i]
			}
		}
	}
	return out
}

// tiled returns l in GGUF's value-head order, as convert_lora_to_gguf.py
// writes a Qwen3.5 adapter: the V rows of in_proj_qkv's B, the rows of
// in_proj_z's B and the columns of out_proj's A reordered.
func (l *testLoRA) tiled(s LinearShape) *testLoRA {
	out := *l
	out.a, out.b = slices.Clone(l.a), slices.Clone(l.b)
	for i := range out.a {
		if out.b[i][loraLinQKV] != nil {
			out.b[i][loraLinQKV] = tileRows(l.b[i][loraLinQKV], l.rank, 2*s.QKDim(), s)
		}
		if out.b[i][loraLinZ] != nil {
			out.b[i][loraLinZ] = tileRows(l.b[i][loraLinZ], l.rank, 0, s)
		}
		if out.a[i][loraLinOut] != nil {
			out.a[i][loraLinOut] = tileCols(l.a[i][loraLinOut], s)
		}
	}
	return &out
}

// TestQwen35TiledOrder: the tiled order the tests write GGUF adapters in
// is the converter's, read off the two base files: the GGUF's in_proj_z
// rows and out_proj columns are the HF directory's, tiled.
func TestQwen35TiledOrder(t *testing.T) {
	hf, gg := qwen35Bases(t)
	s := hf.Config.Linear
	for l := range hf.Layers {
		h, g := hf.Layers[l].Lin, gg.Layers[l].Lin
		if h == nil {
			continue
		}
		if diff := cmp.Diff(tileRows(h.WZ.F32, h.WZ.Cols, 0, s), g.WZ.F32); diff != "" {
			t.Fatalf("layer %d in_proj_z: GGUF rows are not the HF rows tiled (-tiled HF +GGUF):\n%s", l, diff)
		}
		if diff := cmp.Diff(tileCols(h.WOut.F32, s), g.WOut.F32); diff != "" {
			t.Fatalf("layer %d out_proj: GGUF columns are not the HF columns tiled (-tiled HF +GGUF):\n%s", l, diff)
		}
		if diff := cmp.Diff(tileRows(h.WQKV.F32, h.WQKV.Cols, 2*s.QKDim(), s), g.WQKV.F32); diff != "" {
			t.Fatalf("layer %d in_proj_qkv: GGUF rows are not the HF rows with V tiled (-tiled HF +GGUF):\n%s", l, diff)
		}
	}
}

// TestQwen35AdapterExact: a PEFT adapter on all ten kinds, under either
// root of PEFT's names, on the Hugging Face base gives the logits of the
// model whose weights are W + (alpha/r)·B·A (q_proj's B covering the
// queries and their gates), for prefill chunks and decode rows alike; its
// targets are listed in order by the adapter and by InspectAdapter.
func TestQwen35AdapterExact(t *testing.T) {
	hf, _ := qwen35Bases(t)
	pool := kernels.NewPool(2)
	defer pool.Close()
	lora := newTestLoRA(hf, 4, 8, 11, qwen35LoraKinds...)
	want := forwardSteps(lora.merged(hf).NewState(2, pool))
	base := forwardSteps(hf.NewState(2, pool))
	for _, root := range []string{peftRoot, peftVLRoot} {
		t.Run(root, func(t *testing.T) {
			lora.root = root
			dir := filepath.Join(t.TempDir(), "peft")
			lora.writePEFT(t, dir, hf, nil, nil)
			a, err := LoadAdapter(dir, hf)
			if err != nil {
				t.Fatal(err)
			}
			names := loraGGUFNames[:]
			if diff := cmp.Diff(names, a.Info.Targets); diff != "" {
				t.Errorf("Targets (-want +got):\n%s", diff)
			}
			info, err := InspectAdapter(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(names, info.Targets); diff != "" {
				t.Errorf("InspectAdapter Targets (-want +got):\n%s", diff)
			}
			s := hf.NewState(2, pool)
			s.SetAdapter(a)
			moved := 0.0
			for i, row := range forwardSteps(s) {
				if d := maxDiff(row, want[i]); d > 1e-4 {
					t.Errorf("logits row %d differ from the merged model's by %g", i, d)
				}
				moved = max(moved, maxDiff(base[i], want[i]))
			}
			if moved < 0.01 {
				t.Fatalf("the adapter moves the logits by only %g: the test cannot tell it from the base", moved)
			}
		})
	}
}

// TestQwen35AdapterLayouts: one adapter, written as a PEFT directory
// (grouped value heads) and as a LoRA GGUF (tiled, as the converter writes
// it), gives on either base the logits of the PEFT directory on the
// Hugging Face base: the adapter's value heads are reordered exactly when
// its order and the base's differ. On the GGUF base both files load into
// identical weights; the GGUF written without tiling is visibly wrong
// there, so the checks can tell the reordering from its absence.
func TestQwen35AdapterLayouts(t *testing.T) {
	hf, gg := qwen35Bases(t)
	pool := kernels.NewPool(2)
	defer pool.Close()
	lora := newTestLoRA(hf, 4, 8, 12, qwen35LoraKinds...)
	dir := t.TempDir()
	peftDir, ggufPath, untiled := filepath.Join(dir, "peft"), filepath.Join(dir, "a.gguf"), filepath.Join(dir, "untiled.gguf")
	lora.writePEFT(t, peftDir, hf, nil, nil)
	lora.tiled(hf.Config.Linear).writeGGUF(t, ggufPath, "qwen35", gg, nil)
	lora.writeGGUF(t, untiled, "qwen35", gg, nil)
	load := func(path string, m *Model) *Adapter {
		a, err := LoadAdapter(path, m)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	run := func(m *Model, a *Adapter) [][]float32 {
		s := m.NewState(2, pool)
		s.SetAdapter(a)
		return forwardSteps(s)
	}
	want := run(hf, load(peftDir, hf))
	for _, tc := range []struct {
		name, path string
		base       *Model
	}{
		{"peft on gguf base", peftDir, gg},
		{"gguf on gguf base", ggufPath, gg},
		{"gguf on hf base", ggufPath, hf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, row := range run(tc.base, load(tc.path, tc.base)) {
				if d := maxDiff(row, want[i]); d > 1e-4 {
					t.Errorf("logits row %d differ from the PEFT adapter on the HF base by %g", i, d)
				}
			}
		})
	}
	ref, peft := load(ggufPath, gg), load(peftDir, gg)
	for l := range ref.layers {
		for k := range numLoraKinds {
			for _, m := range [][2]kernels.Matrix{{ref.layers[l][k].a, peft.layers[l][k].a}, {ref.layers[l][k].b, peft.layers[l][k].b}} {
				if diff := cmp.Diff(m[0].F32, m[1].F32); diff != "" {
					t.Fatalf("GGUF base, layer %d %s: weights differ (-gguf +peft):\n%s", l, loraGGUFNames[k], diff)
				}
			}
		}
	}
	wrong := 0.0
	for i, row := range run(gg, load(untiled, gg)) {
		wrong = max(wrong, maxDiff(row, want[i]))
	}
	if wrong < 1e-3 {
		t.Errorf("a GGUF adapter in grouped order moves the logits by only %g on the GGUF base: the checks cannot see the reordering", wrong)
	}
}

// tensorEdit changes the tensors writePEFT writes.
type tensorEdit = func([]safetensors.Entry, [][]byte) ([]safetensors.Entry, [][]byte)

// addTensor appends a zero F32 tensor of rows x cols named name.
func addTensor(name string, rows, cols int) tensorEdit {
	return func(e []safetensors.Entry, d [][]byte) ([]safetensors.Entry, [][]byte) {
		return append(e, safetensors.Entry{Name: name, DType: "F32", Shape: []uint64{uint64(rows), uint64(cols)}}), append(d, make([]byte, 4*rows*cols))
	}
}

// resizeTensor makes tensor name a zero rows x cols.
func resizeTensor(name string, rows, cols int) tensorEdit {
	return func(e []safetensors.Entry, d [][]byte) ([]safetensors.Entry, [][]byte) {
		for i := range e {
			if e[i].Name == name {
				e[i].Shape, d[i] = []uint64{uint64(rows), uint64(cols)}, make([]byte, 4*rows*cols)
			}
		}
		return e, d
	}
}

// dropTensor leaves tensor name out.
func dropTensor(name string) tensorEdit {
	return func(e []safetensors.Entry, d [][]byte) ([]safetensors.Entry, [][]byte) {
		i := slices.IndexFunc(e, func(x safetensors.Entry) bool { return x.Name == name })
		return slices.Delete(e, i, i+1), slices.Delete(d, i, i+1)
	}
}

// TestQwen35AdapterErrors: on a hybrid, a module targeted on a layer that
// does not have it, a pair missing from a layer that has it, and a shape
// that does not fit (q_proj's B must cover the gates too) are layout
// errors naming the tensor, from LoadAdapter and CheckAdapter alike.
func TestQwen35AdapterErrors(t *testing.T) {
	hf, gg := qwen35Bases(t)
	c := hf.Config
	attn, lin := c.FullAttnInterval-1, 0
	if c.IsLinear(attn) || !c.IsLinear(lin) {
		t.Fatalf("layers %d and %d: want a full-attention and a linear layer", attn, lin)
	}
	lora := newTestLoRA(hf, 4, 8, 13, loraQ, loraLinQKV, loraLinZ)
	dir := t.TempDir()
	peft := func(name string, ts tensorEdit) string {
		p := filepath.Join(dir, name)
		lora.writePEFT(t, p, hf, nil, ts)
		return p
	}
	ggufWith := func(name string, k loraKind, layer, in, out int) string {
		p := filepath.Join(dir, name)
		lora.writeGGUF(t, p, "qwen35", hf, func(w *gguf.Writer) {
			w.AddTensor(ggufLoraName(layer, k, true), []uint64{uint64(in), 4}, gguf.TypeF32, make([]byte, 4*in*4))
			w.AddTensor(ggufLoraName(layer, k, false), []uint64{4, uint64(out)}, gguf.TypeF32, make([]byte, 4*out*4))
		})
		return p
	}
	qOnLin, qkvOnAttn := peftTensorName(lin, loraQ, true), peftTensorName(attn, loraLinQKV, false)
	qB, qkvA := peftTensorName(attn, loraQ, false), peftTensorName(lin, loraLinQKV, true)
	zA := peftTensorName(lin+1, loraLinZ, true)
	for _, tc := range []struct {
		name, path string
		base       *Model
		want       []string // substrings of the error
	}{
		{"peft q_proj on a linear layer", peft("qlin", addTensor(qOnLin, 4, c.Dim)), hf, []string{qOnLin, "Gated DeltaNet"}},
		{"peft in_proj_qkv on an attention layer", peft("qkvattn", addTensor(qkvOnAttn, c.Linear.ConvDim(), 4)), gg, []string{qkvOnAttn, "full-attention"}},
		{"peft q_proj B without the gates", peft("qshort", resizeTensor(qB, c.QDim(), 4)), hf,
			[]string{qB, fmt.Sprintf("want %dx4", c.QProjDim())}},
		{"peft in_proj_qkv A too narrow", peft("qkvnarrow", resizeTensor(qkvA, 4, c.Dim/2)), gg, []string{qkvA, fmt.Sprintf("want 4x%d", c.Dim)}},
		{"peft in_proj_z missing in one layer", peft("zmissing", dropTensor(zA)), hf, []string{zA, "missing"}},
		{"gguf attn_q on a linear layer", ggufWith("qlin.gguf", loraQ, lin, c.Dim, c.QProjDim()), gg, []string{ggufLoraName(lin, loraQ, true), "Gated DeltaNet"}},
		{"gguf ssm_out on an attention layer", ggufWith("outattn.gguf", loraLinOut, attn, c.Linear.VDim(), c.Dim), hf, []string{ggufLoraName(attn, loraLinOut, true), "full-attention"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadAdapter(tc.path, tc.base)
			if !errors.Is(err, ErrAdapterLayout) {
				t.Fatalf("LoadAdapter: %v, want an error wrapping ErrAdapterLayout", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if cerr := CheckAdapter(tc.path, tc.base); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("CheckAdapter: %v, want LoadAdapter's error", cerr)
			}
		})
	}
}
