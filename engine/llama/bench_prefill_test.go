package llama

import (
	"fmt"
	"testing"

	"github.com/kiln-ai/kiln/kernels"
)

// BenchmarkPrefillQuant measures prompt processing in one 64-row chunk of
// one slot (positions 0..63, only the last row asking for logits) on the
// stories shapes stored as F32 and in quantized types (random valid
// blocks): the workload of llama-bench's pp tests.
func BenchmarkPrefillQuant(b *testing.B) {
	const chunk = 64
	for _, sh := range benchShapes[1:] {
		for _, typ := range []kernels.DType{kernels.F32, kernels.Q8_0, kernels.Q4_K, kernels.Q6_K} {
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
				for b.Loop() {
					s.Forward(rows, logits)
				}
				b.ReportMetric(float64(chunk*b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}
