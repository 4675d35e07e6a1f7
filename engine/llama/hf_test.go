package llama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/safetensors"
	"github.com/kiln-ai/kiln/kernels"
)

var hfArchNames = map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}

// hfConfigJSON is the config.json of m's shape (no rope_scaling).
func hfConfigJSON(m *Model) map[string]any {
	c := m.Config
	return map[string]any{
		"architectures": []string{hfArchNames[c.Arch]}, "hidden_size": c.Dim, "intermediate_size": c.HiddenDim,
		"num_hidden_layers": c.Layers, "num_attention_heads": c.Heads, "num_key_value_heads": c.KVHeads,
		"head_dim": c.HeadDim(), "vocab_size": c.Vocab, "max_position_embeddings": c.SeqLen,
		"rms_norm_eps": c.NormEps, "rope_theta": c.RopeTheta, "tie_word_embeddings": m.Tied(),
		"torch_dtype": "float32", "hidden_act": "silu",
	}
}

// hfEntries lists m's tensors under their Hugging Face names, F32.
func hfEntries(m *Model) ([]safetensors.Entry, [][]float32) {
	var es []safetensors.Entry
	var ds [][]float32
	add := func(name string, v []float32, shape ...int) {
		sh := make([]uint64, len(shape))
		for i, n := range shape {
			sh[i] = uint64(n)
		}
		es = append(es, safetensors.Entry{Name: name, DType: "F32", Shape: sh})
		ds = append(ds, v)
	}
	addM := func(name string, w *kernels.Matrix) { add(name, w.F32, w.Rows, w.Cols) }
	addM("model.embed_tokens.weight", &m.Embed)
	for i := range m.Layers {
		l, p := &m.Layers[i], fmt.Sprintf("model.layers.%d.", i)
		add(p+"input_layernorm.weight", l.AttnNorm, len(l.AttnNorm))
		for _, t := range []struct {
			n string
			w *kernels.Matrix
		}{{"self_attn.q_proj", &l.WQ}, {"self_attn.k_proj", &l.WK}, {"self_attn.v_proj", &l.WV}, {"self_attn.o_proj", &l.WO},
			{"mlp.gate_proj", &l.W1}, {"mlp.down_proj", &l.W2}, {"mlp.up_proj", &l.W3}} {
			addM(p+t.n+".weight", t.w)
		}
		for _, v := range []struct {
			n string
			v []float32
		}{{"self_attn.q_proj.bias", l.BQ}, {"self_attn.k_proj.bias", l.BK}, {"self_attn.v_proj.bias", l.BV},
			{"self_attn.q_norm.weight", l.QNorm}, {"self_attn.k_norm.weight", l.KNorm}} {
			if v.v != nil {
				add(p+v.n, v.v, len(v.v))
			}
		}
		add(p+"post_attention_layernorm.weight", l.FFNNorm, len(l.FFNNorm))
	}
	add("model.norm.weight", m.Norm, len(m.Norm))
	if !m.Tied() {
		addM("lm_head.weight", m.Output)
	}
	return es, ds
}

// writeHFDir writes m (F32, NeoX RoPE) as a Hugging Face directory of
// config.json and shards safetensors files (with an index when shards > 1).
func writeHFDir(tb testing.TB, dir string, m *Model, shards int) {
	tb.Helper()
	cfg, err := json.Marshal(hfConfigJSON(m))
	if err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, filepath.Join(dir, "config.json"), cfg)
	es, ds := hfEntries(m)
	index := map[string]string{}
	for s := range shards {
		name := "model.safetensors"
		if shards > 1 {
			name = fmt.Sprintf("model-%05d-of-%05d.safetensors", s+1, shards)
		}
		var sub []safetensors.Entry
		var data [][]byte
		for i := s; i < len(es); i += shards {
			sub = append(sub, es[i])
			data = append(data, f32Bytes(ds[i]))
			index[es[i].Name] = name
		}
		var buf bytes.Buffer
		if err := safetensors.Write(&buf, sub, data, map[string]string{"format": "pt"}); err != nil {
			tb.Fatal(err)
		}
		writeFile(tb, filepath.Join(dir, name), buf.Bytes())
	}
	if shards > 1 {
		idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": index})
		writeFile(tb, filepath.Join(dir, hfIndex), idx)
	}
}

func writeFile(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// logitsOf runs tokens through a fresh state of m, one per step.
func logitsOf(m *Model, tokens []int) [][]float32 {
	s := m.NewState(1, nil)
	var out [][]float32
	for i, tok := range tokens {
		l := make([]float32, m.Config.Vocab)
		s.Forward([]Row{{Slot: 0, Pos: i, Token: tok, Logits: true}}, [][]float32{l})
		out = append(out, l)
	}
	return out
}

// neoxModels are random models of each architecture in Hugging Face
// layout (NeoX RoPE), tied and untied.
func neoxModels(tb testing.TB) map[string]*Model {
	tb.Helper()
	out := map[string]*Model{}
	for name, m := range archModels(tb) {
		if m.RopeFactors != nil {
			continue // config.json cannot express arbitrary factors
		}
		if m.Config.Hybrid() {
			continue // the reference directories (tiny-qwen35*.hf) cover Qwen3.5's layout
		}
		out[name] = m
	}
	c := Config{Arch: "llama", Dim: 64, HiddenDim: 96, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 50, SeqLen: 32, Rope: RopeNeoX}
	m, err := NewRandom(c, 3, true)
	if err != nil {
		tb.Fatal(err)
	}
	out["hf-llama-tied"] = m
	return out
}

// TestHFRoundTrip writes random models of every architecture as Hugging
// Face directories, in one file and in three shards with an index, and
// requires the loaded model to compute exactly the same logits.
func TestHFRoundTrip(t *testing.T) {
	tokens := []int{1, 7, 3, 9, 2}
	for name, m := range neoxModels(t) {
		want := logitsOf(m, tokens)
		for _, shards := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/shards%d", name, shards), func(t *testing.T) {
				dir := t.TempDir()
				writeHFDir(t, dir, m, shards)
				got, err := FromHFDir(dir, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = got.Close() }()
				if d := cmp.Diff(m.Config, got.Config); d != "" {
					t.Errorf("config (-want +got):\n%s", d)
				}
				if got.Tied() != m.Tied() {
					t.Errorf("tied = %v, want %v", got.Tied(), m.Tied())
				}
				for i, l := range logitsOf(got, tokens) {
					if d := maxDiff(want[i], l); d != 0 {
						t.Errorf("position %d: logits differ by %g", i, d)
					}
				}
			})
		}
	}
}

// TestGGUFRoundTripArchs writes random qwen2, qwen3 and Llama 3 models as
// GGUF and requires the loaded model to compute the same logits.
func TestGGUFRoundTripArchs(t *testing.T) {
	tokens := []int{1, 7, 3, 9, 2}
	for name, m := range archModels(t) {
		t.Run(name, func(t *testing.T) {
			got := parseGGUFModel(t, ggufBytes(t, m, kernels.F32, nil))
			if d := cmp.Diff(m.Config, got.Config); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
			if d := cmp.Diff(m.RopeFactors, got.RopeFactors); d != "" {
				t.Errorf("rope factors (-want +got):\n%s", d)
			}
			want := logitsOf(m, tokens)
			for i, l := range logitsOf(got, tokens) {
				if d := maxDiff(want[i], l); d != 0 {
					t.Errorf("position %d: logits differ by %g", i, d)
				}
			}
		})
	}
	hf := neoxModels(t)["hf-llama-tied"]
	if err := WriteGGUF(&bytes.Buffer{}, hf, kernels.F32, nil); err == nil || !strings.Contains(err.Error(), "not a GGUF") {
		t.Errorf("WriteGGUF of a NeoX llama = %v, want a refusal", err)
	}
}

func TestHFErrors(t *testing.T) {
	base := neoxModels(t)["random-qwen2"]
	edit := func(f func(cfg map[string]any)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			cfg := hfConfigJSON(base)
			f(cfg)
			data, _ := json.Marshal(cfg)
			writeFile(t, filepath.Join(dir, "config.json"), data)
		}
	}
	tests := []struct {
		name   string
		shards int
		mutate func(t *testing.T, dir string)
		want   string
	}{
		{"unsupported architecture", 1, edit(func(c map[string]any) { c["architectures"] = []string{"GPT2LMHeadModel"} }),
			`"GPT2LMHeadModel" is not supported; supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM`},
		{"activation", 1, edit(func(c map[string]any) { c["hidden_act"] = "gelu" }), "hidden_act"},
		{"rope scaling", 1, edit(func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": 4} }), `rope_scaling type "yarn"`},
		{"llama3 scaling without factors", 1, edit(func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "llama3"} }), "rope_scaling llama3 needs"},
		{"sliding window", 1, edit(func(c map[string]any) { c["use_sliding_window"] = true }), "use_sliding_window"},
		{"bad head count", 1, edit(func(c map[string]any) { c["num_key_value_heads"] = 3 }), "n_kv_heads 3"},
		{"wrong hidden size", 1, edit(func(c map[string]any) { c["intermediate_size"] = 10 }), "gate_proj.weight has shape [160 64], want [10 64]"},
		{"untied without lm_head", 1, edit(func(c map[string]any) { c["tie_word_embeddings"] = false }), "lm_head.weight missing"},
		{"no config", 1, func(t *testing.T, dir string) { _ = os.Remove(filepath.Join(dir, "config.json")) }, "config.json"},
		{"no weights", 1, func(t *testing.T, dir string) { _ = os.Remove(filepath.Join(dir, "model.safetensors")) }, "no *.safetensors"},
		{"corrupt weights", 1, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "model.safetensors"), []byte("garbage!!"))
		}, "safetensors"},
		{"missing shard", 3, func(t *testing.T, dir string) { _ = os.Remove(filepath.Join(dir, "model-00002-of-00003.safetensors")) }, "no such file"},
		{"index disagrees", 3, func(t *testing.T, dir string) {
			idx := map[string]any{"weight_map": map[string]string{"model.norm.weight": "model-00001-of-00003.safetensors", "model.embed_tokens.weight": "model-00002-of-00003.safetensors"}}
			data, _ := json.Marshal(idx)
			writeFile(t, filepath.Join(dir, hfIndex), data)
		}, "places it in"},
		{"index escapes the directory", 3, func(t *testing.T, dir string) {
			data, _ := json.Marshal(map[string]any{"weight_map": map[string]string{"a": "../x.safetensors"}})
			writeFile(t, filepath.Join(dir, hfIndex), data)
		}, "not a .safetensors file in the directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeHFDir(t, dir, base, tc.shards)
			tc.mutate(t, dir)
			m, err := FromHFDir(dir, 0)
			if err == nil {
				_ = m.Close()
				t.Fatalf("FromHFDir succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if tc.name != "no config" && tc.name != "missing shard" && !errors.Is(err, ErrFormat) {
				t.Errorf("error %q does not wrap ErrFormat", err)
			}
		})
	}
}

// TestHFExtraTensor: a tensor the architecture does not use is refused, so
// that a feature the engine would ignore cannot pass silently.
func TestHFExtraTensor(t *testing.T) {
	m := neoxModels(t)["hf-llama-tied"]
	dir := t.TempDir()
	es, ds := hfEntries(m)
	es = append(es, safetensors.Entry{Name: "model.layers.0.self_attn.q_proj.bias", DType: "F32", Shape: []uint64{64}})
	ds = append(ds, make([]float32, 64))
	data := make([][]byte, len(ds))
	for i := range ds {
		data[i] = f32Bytes(ds[i])
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, es, data, nil); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(hfConfigJSON(m))
	writeFile(t, filepath.Join(dir, "config.json"), cfg)
	writeFile(t, filepath.Join(dir, "model.safetensors"), buf.Bytes())
	_, err := FromHFDir(dir, 0)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "q_proj.bias is not part of the llama architecture") {
		t.Errorf("FromHFDir = %v, want the stray bias refused", err)
	}
}

// TestLlama3RopeFactors checks the factors computed from rope_scaling
// against those convert_hf_to_gguf.py stored in tiny-llama3rope's
// rope_freqs tensor.
func TestLlama3RopeFactors(t *testing.T) {
	dir := refDir(t)
	f, err := gguf.Open(filepath.Join(dir, "tiny-llama3rope.F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	m, err := FromGGUF(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "tiny-llama3rope.hf", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := parseHFConfig(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(m.RopeFactors, hc.RopeFactors); len(hc.RopeFactors) != 32 || d > 1e-6 {
		t.Errorf("factors from config.json %v differ from rope_freqs %v by %g", hc.RopeFactors, m.RopeFactors, d)
	}
}

// FuzzHFConfig: decoding config.json never panics; what it refuses wraps
// ErrFormat, and what it accepts is a valid configuration.
func FuzzHFConfig(f *testing.F) {
	if dir, err := refDirPath(); err == nil {
		for _, d := range []string{"tiny-llama.hf", "tiny-llama3rope.hf", "tiny-qwen2.hf", "tiny-qwen3.hf"} {
			if data, err := os.ReadFile(filepath.Join(dir, d, "config.json")); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"architectures":["LlamaForCausalLM"],"hidden_size":64,"intermediate_size":96,"num_hidden_layers":1,"num_attention_heads":2,"vocab_size":50,"max_position_embeddings":32,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":1,"high_freq_factor":4,"original_max_position_embeddings":16}}`))
	f.Add([]byte(`{"architectures":["Qwen3ForCausalLM"],"head_dim":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hc, err := parseHFConfig(data, 0)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if err := hc.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		if hc.RopeFactors != nil && len(hc.RopeFactors) != hc.HeadDim()/2 {
			t.Fatalf("%d rope factors for head size %d", len(hc.RopeFactors), hc.HeadDim())
		}
	})
}
