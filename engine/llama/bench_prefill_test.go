package llama

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/kernels"
)

// BenchmarkPrefillQuant measures prompt processing in one 64-row chunk of
// one slot (positions 0..63, only the last row asking for logits) on the
// stories shapes stored as F32 and in quantized types (random valid
// blocks): the workload of llama-bench's pp tests.
func BenchmarkPrefillQuant(b *testing.B) {
	const chunk = 64
	for _, sh := range benchShapes[1:] {
		for _, typ := range []kernels.DType{kernels.F32, kernels.Q8_0, kernels.Q4_0, kernels.Q4_K, kernels.Q6_K} {
			if c := sh.config(); c.Dim%kernels.QK_K != 0 && typ >= kernels.Q2_K {
				continue // the K-quants need rows of whole 256-value blocks
			}
			b.Run(fmt.Sprintf("%s/%v/chunk=%d", sh.name, typ, chunk), func(b *testing.B) {
				c := sh.config()
				c.SeqLen = 256
				m := benchModel(b, sh.name, c, sh.untied)
				if typ != kernels.F32 {
					m = randomQuantModel(b, m, typ, 7)
				}
				pool := kernels.NewPool(2)
				defer pool.Close()
				s := m.NewState(1, pool)
				rows := make([]Row, chunk)
				logits := [][]float32{make([]float32, c.Vocab)}
				for i := range rows {
					rows[i] = Row{Pos: i, Token: (i * 13) % c.Vocab, Logits: i == chunk-1}
				}
				s.Forward(rows, logits) // grow the scratch and the cache
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					s.Forward(rows, logits)
				}
				b.ReportMetric(float64(chunk*b.N)/b.Elapsed().Seconds(), "tok/s")
				// Tokens per CPU-second of the process: far steadier than
				// tok/s on a shared machine, where other work takes the
				// cores for seconds at a time (it still counts the
				// workers' polling between products).
				b.ReportMetric(float64(chunk*b.N)/(cpuTime()-cpu0).Seconds(), "tok/cpu-s")
			})
		}
	}
}

// BenchmarkAttentionChunk compares, alternated in one loop on one
// goroutine, the blocked attention of a 64-row prefill chunk (positions
// 192..255 of one slot, one layer) with the same rows attending one by
// one (the path before it), on the stories shapes' heads; it reports each
// one's median time per chunk and the speed-up.
func BenchmarkAttentionChunk(b *testing.B) {
	for _, sh := range benchShapes[1:] {
		b.Run(sh.name, func(b *testing.B) {
			c := sh.config()
			c.SeqLen, c.Layers = 256, 1
			m, err := NewRandom(c, 3, false)
			if err != nil {
				b.Fatal(err)
			}
			s := m.NewState(1, nil)
			rows := make([]Row, 64)
			for i := range rows {
				rows[i] = Row{Pos: 192 + i, Token: i}
			}
			s.Forward(rows, nil) // fill the cache and grow the scratch
			blocked := func() {
				s.planAttention(rows)
				s.attnLayer, s.attnRows = 0, rows
				s.attnTasks(0, 0, 1)
			}
			single := func() {
				s.chunk.groups = s.chunk.groups[:0]
				for i := range rows {
					s.chunk.groups = append(s.chunk.groups, attnGroup{first: i, rows: 1})
				}
				s.attnLayer, s.attnRows = 0, rows
				s.attnTasks(0, 0, 1)
			}
			var tOld, tNew []time.Duration
			for b.Loop() {
				t0 := time.Now()
				single()
				t1 := time.Now()
				blocked()
				tOld, tNew = append(tOld, t1.Sub(t0)), append(tNew, time.Since(t1))
			}
			med := func(d []time.Duration) float64 { slices.Sort(d); return d[len(d)/2].Seconds() }
			b.ReportMetric(med(tOld)*1e6, "rows-us")
			b.ReportMetric(med(tNew)*1e6, "blocked-us")
			b.ReportMetric(med(tOld)/med(tNew), "speedup")
		})
	}
}
