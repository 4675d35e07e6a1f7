package llama

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kiln-ai/kiln/kernels"
)

// BenchmarkDecodeAdapter measures decode steps of the tiny model without an
// adapter and with a rank-8 adapter on q, v, up and down (the reference
// adapter's targets) or on all seven projections, at batch 1 and 4. The
// ratio of tok/s with and without is the adapter's cost; allocs/op must
// be 0 in every case.
func BenchmarkDecodeAdapter(b *testing.B) {
	c := TinyConfig()
	c.SeqLen = 256
	m := benchModel(b, "tiny", c, true)
	adapters := []struct {
		name  string
		kinds []loraKind
	}{
		{"none", nil},
		{"r8-qvud", []loraKind{loraQ, loraV, loraUp, loraDown}},
		{"r8-all", allLoraKinds},
	}
	for _, batch := range []int{1, 4} {
		for _, ad := range adapters {
			b.Run(fmt.Sprintf("batch=%d/adapter=%s", batch, ad.name), func(b *testing.B) {
				pool := kernels.NewPool(2)
				defer pool.Close()
				s := m.NewState(batch, pool)
				if ad.kinds != nil {
					path := filepath.Join(b.TempDir(), "a.gguf")
					newTestLoRA(m, 8, 16, 9, ad.kinds...).writeGGUF(b, path, c.Arch, m, nil)
					a, err := LoadAdapter(path, m)
					if err != nil {
						b.Fatal(err)
					}
					s.SetAdapter(a)
				}
				rows := make([]Row, batch)
				logits := make([][]float32, batch)
				for i := range logits {
					logits[i] = make([]float32, c.Vocab)
				}
				for i := range rows {
					rows[i] = Row{Slot: i, Pos: c.SeqLen - 1, Token: i, Logits: true}
				}
				s.Forward(rows, logits)
				b.ReportAllocs()
				pos := 0
				for b.Loop() {
					for i := range rows {
						rows[i] = Row{Slot: i, Pos: pos, Token: (pos*7 + i) % c.Vocab, Logits: true}
					}
					s.Forward(rows, logits)
					pos = (pos + 1) % c.SeqLen
				}
				b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}
