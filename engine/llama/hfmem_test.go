package llama

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/engine/safetensors"
)

// qwen3Entries lists the tensors of a tied qwen3 model of shape c, F32,
// in Hugging Face names.
func qwen3Entries(c Config) []safetensors.Entry {
	d, q, kv, hd, ff := uint64(c.Dim), uint64(c.QDim()), uint64(c.KVDim()), uint64(c.HeadDim()), uint64(c.HiddenDim)
	e := func(name string, shape ...uint64) safetensors.Entry {
		return safetensors.Entry{Name: name, DType: "F32", Shape: shape}
	}
	es := []safetensors.Entry{e("model.embed_tokens.weight", uint64(c.Vocab), d)}
	for i := range c.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		es = append(es,
			e(p+"input_layernorm.weight", d), e(p+"self_attn.q_proj.weight", q, d),
			e(p+"self_attn.k_proj.weight", kv, d), e(p+"self_attn.v_proj.weight", kv, d),
			e(p+"self_attn.q_norm.weight", hd), e(p+"self_attn.k_norm.weight", hd),
			e(p+"self_attn.o_proj.weight", d, q), e(p+"post_attention_layernorm.weight", d),
			e(p+"mlp.gate_proj.weight", ff, d), e(p+"mlp.up_proj.weight", ff, d), e(p+"mlp.down_proj.weight", d, ff))
	}
	return append(es, e("model.norm.weight", d))
}

// writeLargeHF writes a random F32 qwen3-shaped Hugging Face directory of
// shape c (tied) without holding its weights in memory: the header first,
// then each tensor from one reused buffer. It returns the file's size.
func writeLargeHF(tb testing.TB, dir string, c Config) int64 {
	tb.Helper()
	hd := c.HeadDim()
	es := qwen3Entries(c)
	cfg := map[string]any{
		"architectures": []string{"Qwen3ForCausalLM"}, "hidden_size": c.Dim, "intermediate_size": c.HiddenDim,
		"num_hidden_layers": c.Layers, "num_attention_heads": c.Heads, "num_key_value_heads": c.KVHeads,
		"head_dim": hd, "vocab_size": c.Vocab, "max_position_embeddings": c.SeqLen, "rms_norm_eps": 1e-6,
		"rope_theta": 1e6, "tie_word_embeddings": true,
	}
	data, _ := json.Marshal(cfg)
	writeFile(tb, filepath.Join(dir, "config.json"), data)
	fh, err := os.Create(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	w := bufio.NewWriterSize(fh, 1<<20)
	if err := safetensors.WriteHeader(w, es, nil); err != nil {
		tb.Fatal(err)
	}
	buf := make([]float32, 1<<18)
	for i, e := range es {
		n := int(e.Shape[0])
		if len(e.Shape) == 2 {
			n *= int(e.Shape[1])
		}
		for n > 0 {
			k := min(n, len(buf))
			fillUniform(buf[:k], 0.02, 1, uint64(i))
			if len(e.Shape) == 1 {
				for j := range buf[:k] {
					buf[j] = 1 // norms
				}
			}
			if _, err := w.Write(f32Bytes(buf[:k])); err != nil {
				tb.Fatal(err)
			}
			n -= k
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	st, err := fh.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return st.Size()
}

// memSnapshot is the heap and resident set at one moment.
type memSnapshot struct {
	heapInuse, heapAlloc uint64
	rssAnon, rssFile     uint64 // bytes; 0 where /proc is absent
}

func snapshot() memSnapshot {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := memSnapshot{heapInuse: ms.HeapInuse, heapAlloc: ms.HeapAlloc}
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && (f[0] == "RssAnon:" || f[0] == "RssFile:") {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				if f[0] == "RssAnon:" {
					s.rssAnon = kb << 10
				} else {
					s.rssFile = kb << 10
				}
			}
		}
	}
	return s
}

// measureOpen writes a directory of shape c, loads it and runs one token,
// returning the file size and the memory before loading, after loading and
// after the token.
func measureOpen(tb testing.TB, c Config) (int64, [3]memSnapshot) {
	tb.Helper()
	dir := tb.TempDir()
	size := writeLargeHF(tb, dir, c)
	var snaps [3]memSnapshot
	snaps[0] = snapshot()
	m, err := FromHFDir(dir, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	snaps[1] = snapshot()
	s := m.NewState(1, nil)
	s.Forward([]Row{{Slot: 0, Pos: 0, Token: 1, Logits: true}}, [][]float32{make([]float32, c.Vocab)})
	snaps[2] = snapshot()
	runtime.KeepAlive(s)
	return size, snaps
}

// TestHFLoadStaysOffHeap: loading a 37 MB directory grows the Go heap by
// far less than the file: the weights alias the memory map.
func TestHFLoadStaysOffHeap(t *testing.T) {
	c := Config{Dim: 256, HiddenDim: 768, Layers: 8, Heads: 4, KVHeads: 2, Vocab: 8000, SeqLen: 128}
	size, s := measureOpen(t, c)
	grew := int64(s[1].heapInuse) - int64(s[0].heapInuse)
	t.Logf("file %d bytes; heap in use grew by %d bytes on load", size, grew)
	if grew > size/16 {
		t.Errorf("loading a %d-byte directory grew the heap by %d bytes: weights were copied", size, grew)
	}
}

// BenchmarkOpenHF500MB reports the heap and resident memory around loading
// a ~540 MB F32 qwen3-shaped directory (written once into a temp dir) and
// running one token through it. Run with -benchtime=1x.
func BenchmarkOpenHF500MB(b *testing.B) {
	c := Config{Dim: 1024, HiddenDim: 2816, Layers: 8, Heads: 16, KVHeads: 8, Vocab: 32000, SeqLen: 512}
	for range b.N {
		size, s := measureOpen(b, c)
		mb := func(v uint64) float64 { return float64(v) / (1 << 20) }
		b.ReportMetric(float64(size)/(1<<20), "file-MB")
		b.ReportMetric(mb(s[1].heapInuse)-mb(s[0].heapInuse), "heap-inuse-load-MB")
		b.ReportMetric(mb(s[1].heapAlloc)-mb(s[0].heapAlloc), "heap-alloc-load-MB")
		b.ReportMetric(mb(s[1].rssAnon)-mb(s[0].rssAnon), "rss-anon-load-MB")
		b.ReportMetric(mb(s[1].rssFile)-mb(s[0].rssFile), "rss-file-load-MB")
		b.ReportMetric(mb(s[2].rssAnon)-mb(s[0].rssAnon), "rss-anon-1tok-MB")
		b.ReportMetric(mb(s[2].rssFile)-mb(s[0].rssFile), "rss-file-1tok-MB")
		b.Logf("before %+v\nloaded %+v\n1 token %+v", s[0], s[1], s[2])
	}
}
