package llama

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

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

// BenchmarkPathsAlternated runs decode steps (batch 1 and 16) and a
// 64-row prompt chunk of the stories shapes, in F32, Q8_0 and (on the
// 110M shape, whose rows are whole super-blocks) Q4_K, on a pool of each
// assembly kernel path this CPU has (generic only where there is none),
// alternated step by step in one loop, so that a shared machine's load
// slows every path alike: it reports each path's tokens/s from its median
// step time (robust to preemption) and each path's speed-up over the next
// slower one.
func BenchmarkPathsAlternated(b *testing.B) {
	paths := kernels.Paths()
	if len(paths) > 1 {
		paths = paths[:len(paths)-1] // generic is 10-15x slower: minutes per run
	}
	for _, sh := range benchShapes[1:] {
		for _, typ := range []kernels.DType{kernels.F32, kernels.Q8_0, kernels.Q4_K} {
			c := sh.config()
			if c.Dim%kernels.QK_K != 0 && typ >= kernels.Q2_K {
				continue
			}
			c.SeqLen = 256
			for _, w := range []struct {
				name         string
				batch, chunk int
			}{{"decode/batch=1", 1, 1}, {"decode/batch=16", 16, 1}, {"prefill/chunk=64", 1, 64}} {
				b.Run(fmt.Sprintf("%s/%v/%s", sh.name, typ, w.name), func(b *testing.B) {
					m := benchModel(b, sh.name, c, sh.untied)
					if typ != kernels.F32 {
						m = randomQuantModel(b, m, typ, 7)
					}
					benchPathsAlternated(b, m, paths, w.batch, w.chunk)
				})
			}
		}
	}
}

func benchPathsAlternated(b *testing.B, m *Model, paths []string, batch, chunk int) {
	vs := make([]benchVariant, len(paths))
	for i, p := range paths {
		vs[i] = benchVariant{name: p, m: m, path: p}
	}
	benchAlternated(b, vs, batch, chunk)
}

// benchVariant is one model on one kernel path, for benchAlternated.
type benchVariant struct {
	name string
	m    *Model
	path string
}

// benchAlternated runs Forward steps of batch slots, chunk rows each, on
// every variant (its model on a 2-worker pool of its path), alternated
// step by step in one loop; it reports each variant's tokens/s from its
// median step time and its speed-up over the next variant.
func benchAlternated(b *testing.B, vs []benchVariant, batch, chunk int) {
	c := vs[0].m.Config
	type run struct {
		s      *State
		times  []time.Duration
		rows   []Row
		logits [][]float32
	}
	runs := make([]*run, len(vs))
	n := batch * chunk
	for i, v := range vs {
		pool, err := kernels.NewPoolOpts(2, kernels.Options{Path: v.path})
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		r := &run{s: v.m.NewState(batch, pool), rows: make([]Row, n)}
		for range batch {
			r.logits = append(r.logits, make([]float32, c.Vocab))
		}
		for j := range r.rows { // warm up: reserve the caches
			r.rows[j] = Row{Slot: j / chunk, Pos: c.SeqLen - chunk + j%chunk, Logits: j%chunk == chunk-1}
		}
		r.s.Forward(r.rows, r.logits)
		runs[i] = r
	}
	pos := 0
	for b.Loop() {
		if pos+chunk > c.SeqLen {
			pos = 0
		}
		for _, r := range runs {
			for j := range r.rows {
				p := pos + j%chunk
				r.rows[j] = Row{Slot: j / chunk, Pos: p, Token: (p*7 + j) % c.Vocab, Logits: j%chunk == chunk-1}
			}
			t0 := time.Now()
			r.s.Forward(r.rows, r.logits)
			r.times = append(r.times, time.Since(t0))
		}
		pos += chunk
	}
	for i, r := range runs {
		med := medianDuration(r.times)
		b.ReportMetric(float64(n)/med.Seconds(), vs[i].name+"-tok/s")
		if i+1 < len(runs) {
			b.ReportMetric(medianDuration(runs[i+1].times).Seconds()/med.Seconds(), vs[i].name+"-speedup")
		}
	}
}

// BenchmarkFloatPackedAlternated runs the F32 stories shapes on the
// default path twice, alternated step by step: the model as loaded
// (kernels.Prepare gave its matrices packed copies, which the avx512
// float products read) and a copy of it whose weights are fresh slices
// without packed copies (the row-major products); decode steps of batch
// 1 and 16, prompt chunks of 64 and 100 rows. It reports each one's
// tokens/s from its median step and the packed one's speed-up.
func BenchmarkFloatPackedAlternated(b *testing.B) {
	for _, sh := range benchShapes[1:] {
		c := sh.config()
		c.SeqLen = 256
		for _, w := range []struct {
			name         string
			batch, chunk int
		}{{"decode/batch=1", 1, 1}, {"decode/batch=16", 16, 1}, {"prefill/chunk=64", 1, 64}, {"prefill/chunk=100", 1, 100}} {
			b.Run(fmt.Sprintf("%s/F32/%s", sh.name, w.name), func(b *testing.B) {
				m := benchModel(b, sh.name, c, sh.untied)
				benchAlternated(b, []benchVariant{{"packed", m, ""}, {"rowmajor", rowMajorCopy(m), ""}}, w.batch, w.chunk)
			})
		}
	}
}

// rowMajorCopy is m with every matrix's weights copied to new memory, so
// that none has a packed copy (kernels.Prepare's copies belong to the
// data they were made from).
func rowMajorCopy(m *Model) *Model {
	cp := *m
	fresh := func(w kernels.Matrix) kernels.Matrix {
		w.F32, w.Raw = slices.Clone(w.F32), slices.Clone(w.Raw)
		return w
	}
	cp.Layers = slices.Clone(m.Layers)
	for i := range cp.Layers {
		l := &cp.Layers[i]
		for _, w := range []*kernels.Matrix{&l.WQ, &l.WK, &l.WV, &l.WO, &l.W1, &l.W2, &l.W3} {
			*w = fresh(*w)
		}
	}
	cp.Embed = fresh(m.Embed)
	if m.Tied() {
		cp.Output = &cp.Embed
	} else {
		out := fresh(*m.Output)
		cp.Output = &out
	}
	return &cp
}

func medianDuration(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
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
