//go:build unix

package llama

import (
	"fmt"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/kernels"
)

// qwen35Bench caches the last model BenchmarkQwen35 built: -count runs a
// sub-benchmark's repetitions one after the other, and building the 4B
// takes seconds and gigabytes; one model at a time is resident.
var qwen35Bench struct {
	name string
	m    *Model
}

func qwen35BenchModel(b *testing.B, name string, c Config, mix quantMix) *Model {
	if qwen35Bench.name != name {
		qwen35Bench.m = nil
		qwen35Bench.m, qwen35Bench.name = qwen35QuantModel(b, c, mix, 42), name
	}
	return qwen35Bench.m
}

// BenchmarkQwen35 measures random-weight Qwen3.5-0.8B and 4B models in
// llama.cpp's Q4_K_M mix and in Q8_0 on a 2-worker pool: decode (batch 1,
// one stream, positions from 256 on) and the prefill of a 512-token
// prompt in the engine's default chunks of 128 rows and in one step of
// 512. Each step alternates with a replay of its products alone (the
// same matrices, rows and dispatches, nothing else: replayProducts), so
// that a shared machine's load slows both alike. It reports tokens/s from
// the median step, the bytes a decode step reads (the weights, three
// passes over the recurrent state, the KV cache read) and their GB/s,
// and the share of the median step spent outside the products.
//
// Run one shape and type per invocation (-bench 'Qwen35/4B/Q8_0/'), so
// that its repetitions reuse one model.
func BenchmarkQwen35(b *testing.B) {
	for _, sh := range qwen35Shapes {
		for _, q := range []struct {
			name string
			mix  quantMix
		}{{"Q4_K_M", mixQ4KM}, {"Q8_0", mixQ8_0}} {
			name := sh.name + "/" + q.name
			b.Run(name+"/decode", func(b *testing.B) {
				benchQwen35Decode(b, qwen35BenchModel(b, name, sh.c, q.mix))
			})
			for _, chunk := range []int{128, 512} {
				b.Run(fmt.Sprintf("%s/prefill512/chunk=%d", name, chunk), func(b *testing.B) {
					benchQwen35Prefill(b, qwen35BenchModel(b, name, sh.c, q.mix), 512, chunk)
				})
			}
		}
	}
}

func benchQwen35Decode(b *testing.B, m *Model) {
	c := m.Config
	pool := kernels.NewPool(2)
	defer pool.Close()
	s := m.NewState(1, pool)
	logits := [][]float32{make([]float32, c.Vocab)}
	const start = 256
	prefillPrompt(s, start, 128, logits)
	rows := []Row{{}}
	var steps, products []time.Duration
	var kvRead int64
	pos := start
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if pos == c.SeqLen {
			pos = 0 // a new sequence: the state restarts
		}
		rows[0] = Row{Pos: pos, Token: pos * 7 % c.Vocab, Logits: true}
		t0 := time.Now()
		s.Forward(rows, logits)
		t1 := time.Now()
		replayProducts(s, 1, logits[0])
		steps, products = append(steps, t1.Sub(t0)), append(products, time.Since(t1))
		kvRead += kvBytesPerToken(c) * int64(pos+1)
		pos++
	}
	step := medianDuration(steps).Seconds()
	bytes := float64(m.StepBytes()) + 3*float64(c.RecurrentBytesPerSlot()) + float64(kvRead)/float64(len(steps))
	b.ReportMetric(1/step, "tok/s")
	b.ReportMetric(bytes/1e6, "MB/tok")
	b.ReportMetric(bytes/step/1e9, "GB/s")
	b.ReportMetric(100*(1-medianDuration(products).Seconds()/step), "outside-%")
	b.ReportMetric(float64(weightBytes(m))/1e6, "weight-MB")
}

// benchQwen35Prefill times the prefill of a prompt of n tokens (positions
// 0..n-1 of one slot) in steps of chunk rows, only the last row asking for
// logits, against the replay of the same steps' products.
func benchQwen35Prefill(b *testing.B, m *Model, n, chunk int) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	s := m.NewState(1, pool)
	logits := [][]float32{make([]float32, m.Config.Vocab)}
	prefillPrompt(s, n, chunk, logits) // grow the scratch and the cache
	var steps, products []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		prefillPrompt(s, n, chunk, logits)
		t1 := time.Now()
		for lo := 0; lo < n; lo += chunk {
			var out []float32
			if lo+chunk >= n {
				out = logits[0]
			}
			replayProducts(s, min(chunk, n-lo), out)
		}
		steps, products = append(steps, t1.Sub(t0)), append(products, time.Since(t1))
	}
	step := medianDuration(steps).Seconds()
	b.ReportMetric(float64(n)/step, "tok/s")
	b.ReportMetric(100*(1-medianDuration(products).Seconds()/step), "outside-%")
}

// prefillPrompt feeds slot 0 of s the positions 0..n-1 in steps of chunk rows,
// the last row asking for logits.
func prefillPrompt(s *State, n, chunk int, logits [][]float32) {
	rows := make([]Row, 0, chunk)
	for lo := 0; lo < n; lo += chunk {
		rows = rows[:0]
		for p := lo; p < min(lo+chunk, n); p++ {
			rows = append(rows, Row{Pos: p, Token: (p * 13) % s.VocabSize(), Logits: p == n-1})
		}
		s.Forward(rows, logits)
	}
}

// replayProducts runs the weight products a Forward of n rows of s's
// model runs (the same matrices, row counts and fused dispatches; the
// classifier on one row when logits is not nil), on s's scratch and
// nothing else. The inputs are whatever the scratch holds; the
// Dim-wide outputs go to the residual stream's buffer, which Forward
// rebuilds, so that no input grows from layer to layer.
func replayProducts(s *State, n int, logits []float32) {
	m := s.m
	c := m.Config
	ls := c.Linear
	kvDim := c.KVDim()
	s.grow(n)
	x, xb := s.x[:n*c.Dim], s.xb[:n*c.Dim]
	for l := range m.Layers {
		L := &m.Layers[l]
		if d := L.Lin; d != nil {
			sc := &s.lin
			sc.outs = [4][]float32{sc.qkv[:n*ls.ConvDim()], sc.z[:n*ls.VDim()], sc.b[:n*ls.ValueHeads], sc.a[:n*ls.ValueHeads]}
			sc.ws = [4]*kernels.Matrix{&d.WQKV, &d.WZ, &d.WB, &d.WA}
			s.pool.MatMulSet(sc.outs[:], sc.ws[:], xb, n)
			s.pool.MatMul(x, &d.WOut, sc.o[:n*ls.VDim()], n)
		} else {
			s.qkvOut = [3][]float32{s.qg[:n*c.QProjDim()], s.k[:n*kvDim], s.v[:n*kvDim]}
			s.qkvW = [3]*kernels.Matrix{&L.WQ, &L.WK, &L.WV}
			s.pool.MatMulSet(s.qkvOut[:], s.qkvW[:], xb, n)
			s.pool.MatMul(x, &L.WO, s.att[:n*c.QDim()], n)
		}
		s.gateOut = [2][]float32{s.hb[:n*c.HiddenDim], s.hb2[:n*c.HiddenDim]}
		s.gateW = [2]*kernels.Matrix{&L.W1, &L.W3}
		s.pool.MatMulSet(s.gateOut[:], s.gateW[:], xb, n)
		s.pool.MatMul(x, &L.W2, s.hb[:n*c.HiddenDim], n)
	}
	if logits != nil {
		s.pool.MatMul(logits, m.Output, xb[:c.Dim], 1)
	}
}
