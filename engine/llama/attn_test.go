package llama

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/kernels"
)

// TestPlanAttention: runs of consecutive positions of one slot become
// blocked groups of up to attnBlock rows (a run's short tail included);
// a lone row of a slot, and a row that does not continue the previous
// row's positions, attends alone.
func TestPlanAttention(t *testing.T) {
	m, err := NewRandom(Config{Dim: 64, HiddenDim: 160, Layers: 1, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(3, nil)
	tests := []struct {
		name string
		rows []Row
		want []attnGroup
	}{
		{"decode rows", []Row{{Slot: 0, Pos: 5}, {Slot: 1, Pos: 6}, {Slot: 2, Pos: 0}},
			[]attnGroup{{0, 1, false}, {1, 1, false}, {2, 1, false}}},
		{"prefill run of 6", []Row{{Pos: 0}, {Pos: 1}, {Pos: 2}, {Pos: 3}, {Pos: 4}, {Pos: 5}},
			[]attnGroup{{0, 4, true}, {4, 2, true}}},
		{"run of 5 with a decode row between slots", []Row{{Slot: 1, Pos: 9}, {Slot: 0, Pos: 3}, {Slot: 0, Pos: 4}, {Slot: 0, Pos: 5}, {Slot: 0, Pos: 6}, {Slot: 0, Pos: 7}, {Slot: 2, Pos: 1}, {Slot: 2, Pos: 2}},
			[]attnGroup{{0, 1, false}, {1, 4, true}, {5, 1, true}, {6, 2, true}}},
		{"positions not consecutive", []Row{{Pos: 0}, {Pos: 2}, {Pos: 3}},
			[]attnGroup{{0, 1, false}, {1, 2, true}}},
	}
	for _, tc := range tests {
		s.planAttention(tc.rows)
		if d := cmp.Diff(tc.want, s.chunk.groups, cmp.AllowUnexported(attnGroup{})); d != "" {
			t.Errorf("%s: groups (-want +got):\n%s", tc.name, d)
		}
	}
	if want := s.attParts * s.chunkPartLen(); len(s.chunk.buf) != want {
		t.Errorf("blocked scratch has %d floats, want %d", len(s.chunk.buf), want)
	}
}

// TestPrefillAllocs: once a State has run a prefill chunk (its scratch and
// the slot's cache grown), later chunks of one slot, whose attention takes
// the blocked path on the pool's workers, allocate nothing.
func TestPrefillAllocs(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	for name, m := range archModels(t) {
		t.Run(name, func(t *testing.T) {
			const chunk = 7
			s := m.NewState(1, pool)
			logits := [][]float32{make([]float32, m.Config.Vocab)}
			rows := make([]Row, chunk)
			set := func(start int) {
				for i := range rows {
					rows[i] = Row{Pos: start + i, Token: (start + i) % m.Config.Vocab, Logits: i == chunk-1}
				}
			}
			// Grow the cache to SeqLen, in order (a hybrid's recurrent
			// state follows its positions; position 0 starts it again).
			last := m.Config.SeqLen - chunk
			for start := 0; start <= last; start += chunk {
				set(start)
				s.Forward(rows, logits)
			}
			start := 0
			allocs := testing.AllocsPerRun(5, func() {
				set(start)
				s.Forward(rows, logits)
				if start += chunk; start > last {
					start = 0
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per prefill chunk, want 0", allocs)
			}
		})
	}
}
