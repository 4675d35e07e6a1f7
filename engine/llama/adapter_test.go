package llama

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/safetensors"
	"github.com/kiln-ai/kiln/kernels"
)

var allLoraKinds = []loraKind{loraQ, loraK, loraV, loraO, loraGate, loraUp, loraDown}

// forwardSteps runs the same schedule on s: slot 0's prompt as one prefill
// chunk, then steps mixing slot 0's decode rows with slot 1's prefill chunks
// and decode rows in one Forward, and returns every logits row produced.
func forwardSteps(s *State) [][]float32 {
	var all [][]float32
	step := func(rows []Row) {
		n := 0
		for _, r := range rows {
			if r.Logits {
				n++
			}
		}
		logits := make([][]float32, n)
		for i := range logits {
			logits[i] = make([]float32, s.VocabSize())
		}
		s.Forward(rows, logits)
		all = append(all, logits...)
	}
	step([]Row{{0, 0, 3, false}, {0, 1, 17, false}, {0, 2, 5, false}, {0, 3, 30, true}})
	step([]Row{{0, 4, 8, true}, {1, 0, 2, false}, {1, 1, 9, false}, {1, 2, 33, true}})
	step([]Row{{1, 3, 1, true}, {0, 5, 12, true}})
	step([]Row{{0, 6, 39, true}})
	return all
}

// TestAdapterExact: a State with an adapter on all seven projections gives
// the logits of the model whose weights are W + (alpha/r)·B·A, for prefill
// chunks, decode rows and both mixed in one step, serially and over a
// pool; SetAdapter(nil) gives the base model back exactly.
func TestAdapterExact(t *testing.T) {
	m := newAdapterTestModel(t)
	lora := newTestLoRA(m, 4, 8, 1, allLoraKinds...)
	path := filepath.Join(t.TempDir(), "all.gguf")
	lora.writeGGUF(t, path, "llama", m, nil)
	a, err := LoadAdapter(path, m)
	if err != nil {
		t.Fatal(err)
	}
	if a.Scale() != 2 {
		t.Fatalf("scale %v, want alpha/r = 2", a.Scale())
	}
	merged := lora.merged(m)
	for _, workers := range []int{1, 2} {
		pool := kernels.NewPool(workers)
		defer pool.Close()
		want := forwardSteps(merged.NewState(2, pool))
		base := forwardSteps(m.NewState(2, pool))
		s := m.NewState(2, pool)
		s.SetAdapter(a)
		if s.Adapter() != a {
			t.Fatal("Adapter() does not return the adapter set")
		}
		got := forwardSteps(s)
		moved := 0.0
		for i := range want {
			if d := maxDiff(got[i], want[i]); d > 1e-5 {
				t.Errorf("workers %d: logits row %d differ from the merged model's by %g", workers, i, d)
			}
			moved = max(moved, maxDiff(base[i], want[i]))
		}
		if moved < 0.01 {
			t.Fatalf("the adapter moves the logits by only %g: the test cannot tell it from the base", moved)
		}
		s2 := m.NewState(2, pool)
		s2.SetAdapter(a)
		s2.SetAdapter(nil)
		for i, row := range forwardSteps(s2) {
			if d := maxDiff(row, base[i]); d != 0 {
				t.Errorf("workers %d: after SetAdapter(nil), row %d differs from the base by %g", workers, i, d)
			}
		}
	}
}

// TestAdapterPEFTMatchesGGUF: the same adapter written as a PEFT directory
// (Hugging Face row order) and as a LoRA GGUF (llama.cpp's order) loads
// into identical weights on a llama GGUF-layout base, and on a base in
// Hugging Face layout, where the GGUF's B_q/B_k rows are permuted back;
// on both bases the logits equal those of the GGUF-layout base with its
// adapter.
func TestAdapterPEFTMatchesGGUF(t *testing.T) {
	m := newAdapterTestModel(t)
	lora := newTestLoRA(m, 4, 4, 2, allLoraKinds...)
	dir := t.TempDir()
	ggufPath, peftDir := filepath.Join(dir, "a.gguf"), filepath.Join(dir, "peft")
	lora.writeGGUF(t, ggufPath, "llama", m, nil)
	lora.writePEFT(t, peftDir, m, nil, nil)
	hf := hfLayout(m)
	pool := kernels.NewPool(1)
	defer pool.Close()
	ref, err := LoadAdapter(ggufPath, m)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(2, pool)
	s.SetAdapter(ref)
	want := forwardSteps(s)
	for _, tc := range []struct {
		name, path string
		base       *Model
	}{
		{"peft on gguf base", peftDir, m},
		{"gguf on hf base", ggufPath, hf},
		{"peft on hf base", peftDir, hf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := LoadAdapter(tc.path, tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if tc.base == m {
				for i := range a.layers {
					for k := range numLoraKinds {
						if diff := cmp.Diff(ref.layers[i][k].b.F32, a.layers[i][k].b.F32); diff != "" {
							t.Fatalf("layer %d %s: B differs (-gguf +peft):\n%s", i, loraGGUFNames[k], diff)
						}
					}
				}
			}
			s := tc.base.NewState(2, pool)
			s.SetAdapter(a)
			for i, row := range forwardSteps(s) {
				if d := maxDiff(row, want[i]); d > 1e-5 {
					t.Errorf("logits row %d differ from the GGUF base with the GGUF adapter by %g", i, d)
				}
			}
		})
	}
}

// TestInspectAdapter: InspectAdapter reads rank, alpha, targets and
// architecture from the metadata alone and hashes the weights file.
func TestInspectAdapter(t *testing.T) {
	m := newAdapterTestModel(t)
	lora := newTestLoRA(m, 4, 16, 3, loraQ, loraV, loraUp, loraDown)
	dir := t.TempDir()
	ggufPath, peftDir := filepath.Join(dir, "a.gguf"), filepath.Join(dir, "peft")
	lora.writeGGUF(t, ggufPath, "llama", m, nil)
	lora.writePEFT(t, peftDir, m, nil, nil)
	targets := []string{"attn_q", "attn_v", "ffn_up", "ffn_down"}
	for _, tc := range []struct {
		path, weights string
		want          AdapterInfo
	}{
		{ggufPath, ggufPath, AdapterInfo{Format: "gguf", Rank: 4, Alpha: 16, Targets: targets, Arch: "llama"}},
		{peftDir, filepath.Join(peftDir, peftWeightsFile), AdapterInfo{Format: "peft", Rank: 4, Alpha: 16, Targets: targets}},
	} {
		data, err := os.ReadFile(tc.weights)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		tc.want.Bytes, tc.want.SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
		got, err := InspectAdapter(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("InspectAdapter(%s) (-want +got):\n%s", tc.want.Format, diff)
		}
		a, err := LoadAdapter(tc.path, m)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, a.Info); diff != "" {
			t.Errorf("LoadAdapter(%s).Info (-inspect +load):\n%s", tc.want.Format, diff)
		}
	}
}

// TestAdapterErrors: every adapter whose files are wrong is refused with
// ErrAdapterLayout and a message naming the file and the tensor or key.
func TestAdapterErrors(t *testing.T) {
	m := newAdapterTestModel(t)
	lora := newTestLoRA(m, 4, 8, 4, loraQ, loraV, loraDown)
	dir := t.TempDir()
	peft := func(name string, cfg func(map[string]any), ts func([]safetensors.Entry, [][]byte) ([]safetensors.Entry, [][]byte)) string {
		p := filepath.Join(dir, name)
		lora.writePEFT(t, p, m, cfg, ts)
		return p
	}
	ggufFile := func(name, arch string, edit func(*gguf.Writer)) string {
		p := filepath.Join(dir, name)
		lora.writeGGUF(t, p, arch, m, edit)
		return p
	}
	qA := peftTensorName(0, loraQ, true)
	for _, tc := range []struct {
		name string
		path string
		want []string // substrings of the error
	}{
		{"peft A with the wrong inner dim", peft("inner", nil, func(e []safetensors.Entry, d [][]byte) ([]safetensors.Entry, [][]byte) {
			for i := range e {
				if e[i].Name == qA {
					e[i].Shape = []uint64{4, 32} // the base's q_proj reads 64 values
					d[i] = d[i][:4*32*4]
				}
			}
			return e, d
		}), []string{peftWeightsFile, qA, "4x32, want 4x64"}},
		{"peft B missing", peft("noB", nil, func(e []safetensors.Entry, d [][]byte) ([]safetensors.Entry, [][]byte) {
			return e[:len(e)-1], d[:len(d)-1]
		}), []string{peftWeightsFile, peftTensorName(1, loraDown, false), "missing"}},
		{"peft stray tensor", peft("stray", nil, func(e []safetensors.Entry, d [][]byte) ([]safetensors.Entry, [][]byte) {
			return append(e, safetensors.Entry{Name: "base_model.model.lm_head.lora_A.weight", DType: "F32", Shape: []uint64{1}}), append(d, make([]byte, 4))
		}), []string{peftWeightsFile, "base_model.model.lm_head.lora_A.weight"}},
		{"peft r=0", peft("r0", func(c map[string]any) { c["r"] = 0 }, nil), []string{peftConfigFile, "r = 0"}},
		{"peft rank differs from the tensors", peft("r8", func(c map[string]any) { c["r"] = 8 }, nil), []string{peftWeightsFile, qA, "want 8x64"}},
		{"peft unknown target", peft("embed", func(c map[string]any) { c["target_modules"] = []string{"embed_tokens"} }, nil), []string{peftConfigFile, "embed_tokens"}},
		{"peft dora", peft("dora", func(c map[string]any) { c["use_dora"] = true }, nil), []string{peftConfigFile, "use_dora"}},
		{"gguf for another arch", ggufFile("qwen2.gguf", "qwen2", nil), []string{"qwen2.gguf", "general.architecture", "qwen2"}},
		{"gguf model, not adapter", ggufFile("model.gguf", "llama", func(w *gguf.Writer) { w.SetString("general.type", "model") }), []string{"model.gguf", "general.type", `"model"`}},
		{"gguf not lora", ggufFile("cv.gguf", "llama", func(w *gguf.Writer) { w.SetString("adapter.type", "control_vector") }), []string{"cv.gguf", "adapter.type"}},
		{"gguf stray tensor", ggufFile("stray.gguf", "llama", func(w *gguf.Writer) {
			w.AddTensor("token_embd.weight", []uint64{64, 40}, gguf.TypeF32, make([]byte, 64*40*4))
		}), []string{"stray.gguf", "token_embd.weight"}},
		{"gguf half a pair", ggufFile("half.gguf", "llama", func(w *gguf.Writer) {
			w.AddTensor(ggufLoraName(1, loraUp, true), []uint64{64, 4}, gguf.TypeF32, make([]byte, 64*4*4))
		}), []string{"half.gguf", ggufLoraName(1, loraUp, false), "missing"}},
		{"gguf B of the wrong height", ggufFile("tall.gguf", "llama", func(w *gguf.Writer) {
			w.AddTensor(ggufLoraName(0, loraK, true), []uint64{64, 4}, gguf.TypeF32, make([]byte, 64*4*4))
			w.AddTensor(ggufLoraName(0, loraK, false), []uint64{4, 64}, gguf.TypeF32, make([]byte, 64*4*4))
		}), []string{"tall.gguf", ggufLoraName(0, loraK, false), "64x4, want 32x4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadAdapter(tc.path, m)
			if !errors.Is(err, ErrAdapterLayout) {
				t.Fatalf("LoadAdapter: %v, want an error wrapping ErrAdapterLayout", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("peft without adapter_config.json", func(t *testing.T) {
		p := peft("noconfig", nil, nil)
		if err := os.Remove(filepath.Join(p, peftConfigFile)); err != nil {
			t.Fatal(err)
		}
		for _, f := range []func() error{
			func() error { _, err := LoadAdapter(p, m); return err },
			func() error { _, err := InspectAdapter(p); return err },
		} {
			if err := f(); !errors.Is(err, ErrAdapterLayout) || !strings.Contains(err.Error(), peftConfigFile) {
				t.Errorf("got %v, want ErrAdapterLayout naming %s", err, peftConfigFile)
			}
		}
	})
	t.Run("malformed safetensors", func(t *testing.T) {
		p := peft("badst", nil, nil)
		if err := os.WriteFile(filepath.Join(p, peftWeightsFile), []byte("not a safetensors file"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadAdapter(p, m); !errors.Is(err, ErrAdapterLayout) || !strings.Contains(err.Error(), peftWeightsFile) {
			t.Errorf("got %v, want ErrAdapterLayout naming %s", err, peftWeightsFile)
		}
	})
}

// TestSetAdapterOtherModel: an adapter loaded for another model is a
// caller bug.
func TestSetAdapterOtherModel(t *testing.T) {
	m, other := newAdapterTestModel(t), newAdapterTestModel(t)
	path := filepath.Join(t.TempDir(), "a.gguf")
	newTestLoRA(m, 2, 2, 5, loraV).writeGGUF(t, path, "llama", m, nil)
	a, err := LoadAdapter(path, m)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("SetAdapter with another model's adapter did not panic")
		}
	}()
	other.NewState(1, nil).SetAdapter(a)
}

// TestAdapterForwardNoAlloc: a decode step with an adapter allocates
// nothing once the scratch has grown.
func TestAdapterForwardNoAlloc(t *testing.T) {
	m := newAdapterTestModel(t)
	path := filepath.Join(t.TempDir(), "a.gguf")
	newTestLoRA(m, 8, 16, 6, allLoraKinds...).writeGGUF(t, path, "llama", m, nil)
	a, err := LoadAdapter(path, m)
	if err != nil {
		t.Fatal(err)
	}
	pool := kernels.NewPool(2)
	defer pool.Close()
	s := m.NewState(1, pool)
	s.SetAdapter(a)
	rows := []Row{{Slot: 0, Pos: 0, Token: 1, Logits: true}}
	logits := [][]float32{make([]float32, s.VocabSize())}
	s.Forward(rows, logits)
	allocs := testing.AllocsPerRun(20, func() {
		rows[0].Pos = (rows[0].Pos + 1) % 16
		s.Forward(rows, logits)
	})
	if allocs != 0 {
		t.Errorf("decode step with an adapter: %v allocations, want 0", allocs)
	}
}
