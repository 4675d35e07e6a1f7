package enginetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/llama"
)

// TestBackendMatchesGreedy: decoding through Forward row by row gives
// Greedy's ids, and batching two slots in one call changes nothing.
func TestBackendMatchesGreedy(t *testing.T) {
	const vocab = 32
	prompts := [][]int{{1, 2, 3}, {4}}
	b := NewBackend(2, 16, vocab)
	logits := [][]float32{make([]float32, vocab), make([]float32, vocab)}
	// Prefill both in one call, then decode both together.
	var rows []llama.Row
	for s, p := range prompts {
		for i, tok := range p {
			rows = append(rows, llama.Row{Slot: s, Pos: i, Token: tok, Logits: i == len(p)-1})
		}
	}
	got := [][]int{nil, nil}
	pos := []int{3, 1}
	b.Forward(rows, logits)
	for range 5 {
		rows = rows[:0]
		for s := range prompts {
			id := argmaxf(logits[s])
			got[s] = append(got[s], id)
			rows = append(rows, llama.Row{Slot: s, Pos: pos[s], Token: id, Logits: true})
			pos[s]++
		}
		b.Forward(rows, logits)
	}
	for s, p := range prompts {
		if d := cmp.Diff(Greedy(p, 5, vocab), got[s]); d != "" {
			t.Errorf("slot %d (-want +got):\n%s", s, d)
		}
	}
	if err := b.Err(); err != nil {
		t.Errorf("Err = %v", err)
	}
}

func argmaxf(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// TestBackendChecksContract: a skipped position, a released slot reused
// mid-sequence and a missing logits buffer are reported.
func TestBackendChecksContract(t *testing.T) {
	tests := []struct {
		name string
		run  func(b *Backend)
	}{
		{"skipped position", func(b *Backend) {
			b.Forward([]llama.Row{{Slot: 0, Pos: 1, Token: 1}}, nil)
		}},
		{"position after release", func(b *Backend) {
			b.Forward([]llama.Row{{Slot: 0, Pos: 0, Token: 1}}, nil)
			b.Release(0)
			b.Forward([]llama.Row{{Slot: 0, Pos: 1, Token: 1}}, nil)
		}},
		{"no logits buffer", func(b *Backend) {
			b.Forward([]llama.Row{{Slot: 0, Pos: 0, Token: 1, Logits: true}}, nil)
		}},
		{"token outside vocabulary", func(b *Backend) {
			b.Forward([]llama.Row{{Slot: 0, Pos: 0, Token: 99}}, nil)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBackend(1, 8, 16)
			tc.run(b)
			if b.Err() == nil {
				t.Error("no contract violation reported")
			}
		})
	}
}
