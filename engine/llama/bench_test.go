package llama

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kiln-ai/kiln/kernels"
)

// Shapes of the decode benchmarks: the TinyLlamas checkpoints that
// llama2.c's run.c and llama.cpp are usually quoted on.
var benchShapes = []struct {
	name   string
	config func() Config
	untied bool
}{
	{"tiny", TinyConfig, true},
	{"stories15M", func() Config {
		return Config{Dim: 288, HiddenDim: 768, Layers: 6, Heads: 6, KVHeads: 6, Vocab: 32000, SeqLen: 256}
	}, false},
	{"stories110M", func() Config {
		return Config{Dim: 768, HiddenDim: 2048, Layers: 12, Heads: 12, KVHeads: 12, Vocab: 32000, SeqLen: 256}
	}, false},
}

var (
	benchMu     sync.Mutex
	benchModels = map[string]*Model{}
)

// benchModel builds (once per test binary) a random model of the shape.
func benchModel(b *testing.B, name string, c Config, untied bool) *Model {
	benchMu.Lock()
	defer benchMu.Unlock()
	if m, ok := benchModels[name]; ok {
		return m
	}
	m, err := NewRandom(c, 42, untied)
	if err != nil {
		b.Fatal(err)
	}
	benchModels[name] = m
	return m
}

// BenchmarkDecode measures batched decode steps: every step runs one token
// for each of batch slots at positions cycling through [0, 256), so the
// attention spans 128 positions on average. It reports tokens/s (all slots
// together) and the GB/s of weights read (once per step).
func BenchmarkDecode(b *testing.B) {
	for _, sh := range benchShapes {
		for _, batch := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/batch=%d", sh.name, batch), func(b *testing.B) {
				c := sh.config()
				c.SeqLen = 256
				m := benchModel(b, sh.name, c, sh.untied)
				pool := kernels.NewPool(2)
				defer pool.Close()
				s := m.NewState(batch, pool)
				rows := make([]Row, batch)
				logits := make([][]float32, batch)
				for i := range logits {
					logits[i] = make([]float32, c.Vocab)
				}
				// Warm up: reserve every slot's cache.
				for i := range rows {
					rows[i] = Row{Slot: i, Pos: c.SeqLen - 1, Token: i, Logits: true}
				}
				s.Forward(rows, logits)
				b.ReportAllocs()
				b.ResetTimer()
				pos := 0
				for b.Loop() {
					for i := range rows {
						rows[i] = Row{Slot: i, Pos: pos, Token: (pos*7 + i) % c.Vocab, Logits: true}
					}
					s.Forward(rows, logits)
					pos = (pos + 1) % c.SeqLen
				}
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(batch*b.N)/sec, "tok/s")
				b.ReportMetric(float64(m.StepBytes())*float64(b.N)/sec/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkPrefill measures prompt processing in chunks of one slot, only
// the last row asking for logits.
func BenchmarkPrefill(b *testing.B) {
	for _, sh := range benchShapes[:2] {
		for _, chunk := range []int{16, 64} {
			b.Run(fmt.Sprintf("%s/chunk=%d", sh.name, chunk), func(b *testing.B) {
				c := sh.config()
				c.SeqLen = 256
				m := benchModel(b, sh.name, c, sh.untied)
				pool := kernels.NewPool(2)
				defer pool.Close()
				s := m.NewState(1, pool)
				rows := make([]Row, chunk)
				logits := [][]float32{make([]float32, c.Vocab)}
				for i := range rows { // warm up: grow the scratch and the cache
					rows[i] = Row{Pos: c.SeqLen - chunk + i, Logits: i == chunk-1}
				}
				s.Forward(rows, logits)
				b.ReportAllocs()
				pos := 0
				for b.Loop() {
					if pos+chunk > c.SeqLen {
						pos = 0
					}
					for i := range rows {
						rows[i] = Row{Pos: pos + i, Token: (pos + i) % c.Vocab, Logits: i == chunk-1}
					}
					s.Forward(rows, logits)
					pos += chunk
				}
				b.ReportMetric(float64(chunk*b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}

// BenchmarkOpenTiny measures building the embedded default at start-up.
func BenchmarkOpenTiny(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OpenTiny(); err != nil {
			b.Fatal(err)
		}
	}
}
