package llama

import (
	"github.com/kiln-ai/kiln/internal/testshared"
	"slices"

	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/kernels"
)

// TestGolden reproduces the llama2.c reference: the top-5 logits after each
// teacher-forced prompt to 1e-4 and the greedy continuation exactly, with the
// prompt fed one token at a time, in chunks, and in one step.
func TestGolden(t *testing.T) {
	m := loadStories(t)
	cases := loadGolden(t)
	pool := kernels.NewPool(2)
	defer pool.Close()
	for ci, gc := range cases {
		for _, chunk := range []int{1, 2, 3, 1 << 20} {
			t.Run(fmt.Sprintf("case%d/chunk%d", ci, chunk), func(t *testing.T) {
				s := m.NewState(1, pool)
				logits := prefill(s, 0, 0, gc.Prompt, chunk)
				got := topK(logits, 5)
				for i, w := range gc.Top5 {
					if got[i][0] != w[0] || math.Abs(got[i][1]-w[1]) > 1e-4 {
						t.Errorf("top-5[%d] = (%v, %.6f), want (%v, %.6f)", i, got[i][0], got[i][1], w[0], w[1])
					}
				}
				var gen []int
				pos := len(gc.Prompt)
				for range gc.Generated {
					tok := argmax(logits)
					gen = append(gen, tok)
					s.Forward([]Row{{Slot: 0, Pos: pos, Token: tok, Logits: true}}, [][]float32{logits})
					pos++
				}
				if diff := cmp.Diff(gc.Generated, gen); diff != "" {
					t.Errorf("greedy ids (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestBatchingInvisible checks that running several slots in one Forward,
// mixing a prefill chunk of one slot with decode rows of others, gives the
// logits each slot gets when run alone one token at a time.
func TestBatchingInvisible(t *testing.T) {
	small, err := NewRandom(Config{Dim: 64, HiddenDim: 160, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	// Quantized weights run the integer products (the packed ones on
	// avx512), whose rows must not depend on their batch either.
	models := map[string]*Model{"random-untied": small, "random-q8_0": randomQuantModel(t, small, kernels.Q8_0, 5)}
	for name, m := range archModels(t) {
		models[name] = m
	}
	if _, err := testshared.Path("models", "stories260K.bin"); err == nil {
		models["stories260K"] = loadStories(t)
	}
	for name, m := range models {
		t.Run(name, func(t *testing.T) {
			const slots, steps = 4, 12
			prompts := make([][]int, slots)
			for s := range prompts {
				for i := range steps {
					prompts[s] = append(prompts[s], (s*31+i*17+1)%m.Config.Vocab)
				}
			}
			// Reference: each slot alone, one token per step.
			want := make([][][]float32, slots)
			pool := kernels.NewPool(2)
			defer pool.Close()
			for sl := range slots {
				st := m.NewState(1, pool)
				for i, tok := range prompts[sl] {
					l := make([]float32, m.Config.Vocab)
					st.Forward([]Row{{Slot: 0, Pos: i, Token: tok, Logits: true}}, [][]float32{l})
					want[sl] = append(want[sl], l)
				}
			}
			for _, chunk := range []int{1, 3, 5, steps} {
				t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) {
					st := m.NewState(slots, pool)
					next := make([]int, slots) // next position of each slot
					for step := 0; ; step++ {
						var rows []Row
						for sl := range slots {
							// Slot sl starts sl steps late and advances a
							// chunk at a time when its turn comes, else one.
							if step < sl || next[sl] >= steps {
								continue
							}
							n := 1
							if (step+sl)%2 == 0 {
								n = chunk
							}
							for p := next[sl]; p < min(next[sl]+n, steps); p++ {
								rows = append(rows, Row{Slot: sl, Pos: p, Token: prompts[sl][p], Logits: true})
							}
						}
						if len(rows) == 0 {
							if step > 4*steps {
								break
							}
							continue
						}
						logits := make([][]float32, len(rows))
						for i := range logits {
							logits[i] = make([]float32, m.Config.Vocab)
						}
						st.Forward(rows, logits)
						for i, r := range rows {
							w := want[r.Slot][r.Pos]
							tol := 1e-5 * max(1, maxAbs(w))
							if d := maxDiff(w, logits[i]); d > tol {
								t.Fatalf("slot %d pos %d: batched logits differ by %g (tol %g)", r.Slot, r.Pos, d, tol)
							}
							next[r.Slot] = r.Pos + 1
						}
					}
					for sl, n := range next {
						if n != steps {
							t.Fatalf("slot %d ran %d of %d positions", sl, n, steps)
						}
					}
				})
			}
		})
	}
}

// archModels are small random models of the qwen2, qwen3 and qwen35
// (hybrid: Gated DeltaNet and gated attention with partial rotary) shapes
// and of Llama 3 (RoPE factors), with a head size that is not Dim/Heads for
// qwen3, so that every architecture feature takes part in batching tests.
func archModels(tb testing.TB) map[string]*Model {
	tb.Helper()
	base := Config{Dim: 64, HiddenDim: 160, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}
	q2, q3, l3, q35 := base, base, base, base
	q35.Arch, q35.Rope, q35.QKNorm, q35.HeadSize, q35.RotaryDim, q35.AttnGate = "qwen35", RopeNeoX, true, 16, 8, true
	q35.FullAttnInterval, q35.Layers = 2, 4
	q35.Linear = LinearShape{KeyHeads: 2, ValueHeads: 4, KeyDim: 16, ValueDim: 16, ConvKernel: 4, Tiled: true}
	q2.Arch, q2.Rope, q2.QKVBias, q2.RopeTheta = "qwen2", RopeNeoX, true, 1e6
	q3.Arch, q3.Rope, q3.QKNorm, q3.HeadSize = "qwen3", RopeNeoX, true, 24
	l3.RopeTheta = 500000
	out := map[string]*Model{}
	for name, c := range map[string]Config{"random-qwen2": q2, "random-qwen3": q3, "random-llama3rope": l3, "random-qwen35": q35} {
		m, err := NewRandom(c, 11, false)
		if err != nil {
			tb.Fatal(err)
		}
		if name == "random-llama3rope" {
			m.RopeFactors = Llama3RopeFactors(c.HeadDim(), 500000, 8, 1, 4, 16)
		}
		if err := m.validate(); err != nil {
			tb.Fatal(err)
		}
		out[name] = m
	}
	return out
}

// TestDecodeAllocs: a decode step allocates nothing once the slot's cache
// and the scratch exist, for every architecture.
func TestDecodeAllocs(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	for name, m := range archModels(t) {
		t.Run(name, func(t *testing.T) {
			s := m.NewState(2, pool)
			logits := [][]float32{make([]float32, m.Config.Vocab), make([]float32, m.Config.Vocab)}
			rows := []Row{{Slot: 0, Pos: 0, Token: 1, Logits: true}, {Slot: 1, Pos: 0, Token: 2, Logits: true}}
			s.Forward(rows, logits)
			pos := 1
			allocs := testing.AllocsPerRun(20, func() {
				rows[0].Pos, rows[1].Pos = pos, pos
				s.Forward(rows, logits)
				pos++
			})
			if allocs != 0 {
				t.Errorf("%v allocations per decode step, want 0", allocs)
			}
		})
	}
}

func maxAbs(x []float32) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(float64(v)))
	}
	return m
}

// TestLogitsOnlyWhereAsked checks that logits[k] belongs to the k-th row
// with Logits set, and that rows without it leave no trace.
func TestLogitsOnlyWhereAsked(t *testing.T) {
	m, err := NewRandom(Config{Dim: 32, HiddenDim: 64, Layers: 1, Heads: 4, KVHeads: 4, Vocab: 50, SeqLen: 16}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	toks := []int{3, 9, 27, 11}
	ref := m.NewState(1, nil)
	var want [][]float32
	for i, tok := range toks {
		l := make([]float32, 50)
		ref.Forward([]Row{{Pos: i, Token: tok, Logits: true}}, [][]float32{l})
		want = append(want, l)
	}
	s := m.NewState(1, nil)
	got := [][]float32{make([]float32, 50), make([]float32, 50)}
	s.Forward([]Row{{Pos: 0, Token: 3}, {Pos: 1, Token: 9, Logits: true}, {Pos: 2, Token: 27}, {Pos: 3, Token: 11, Logits: true}}, got)
	for k, pos := range []int{1, 3} {
		if d := maxDiff(want[pos], got[k]); d > 1e-5 {
			t.Errorf("logits[%d] (row at pos %d) differ by %g", k, pos, d)
		}
	}
}

// TestRelease checks that a released slot keeps its memory for its next
// sequence, is reused from position 0 with the results of a fresh state,
// and gives the memory back on Reclaim.
func TestRelease(t *testing.T) {
	m, err := NewRandom(Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 300}, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(2, nil)
	if got := s.KVBytes(); got != 0 {
		t.Fatalf("fresh state holds %d KV bytes, want 0", got)
	}
	a := prefill(s, 0, 0, []int{1, 2, 3, 4, 5, 6, 7}, 4)
	prefill(s, 1, 0, []int{8, 9}, 1)
	if s.KVBytes() == 0 {
		t.Fatal("KV bytes still 0 after use")
	}
	held := s.KVBytes()
	s.Release(0)
	s.Release(1)
	s.Release(-1) // ignored
	s.Release(9)  // ignored
	if got := s.KVBytes(); got != held {
		t.Fatalf("after Release: %d KV bytes, want the %d held (kept for the next sequence)", got, held)
	}
	b := prefill(s, 0, 0, []int{1, 2, 3, 4, 5, 6, 7}, 7)
	if d := maxDiff(a, b); d > 1e-5 {
		t.Errorf("reused slot differs by %g", d)
	}
	// Reclaim drops the block slot 1 released, not slot 0's (in use again).
	slot1 := s.blockBytes()
	if got := s.Reclaim(); got < slot1 {
		t.Errorf("Reclaim gave %d bytes, want at least slot 1's block of %d", got, slot1)
	}
	if got := s.KVBytes(); got != held-slot1 || len(s.slots[1].blocks) != 0 || len(s.slots[0].blocks) != 1 {
		t.Errorf("after Reclaim: %d KV bytes (slot blocks %d, %d), want %d: slot 0's only", got, len(s.slots[0].blocks), len(s.slots[1].blocks), held-slot1)
	}
	s.Release(0)
	s.Reclaim()
	if got := s.KVBytes(); got != 0 {
		t.Fatalf("after Release and Reclaim: %d KV bytes, want 0", got)
	}
	b = prefill(s, 0, 0, []int{1, 2, 3, 4, 5, 6, 7}, 7)
	if d := maxDiff(a, b); d > 1e-5 {
		t.Errorf("reused slot differs by %g", d)
	}
	// Growing past the first reservation keeps earlier positions.
	long := make([]int, 200)
	for i := range long {
		long[i] = i % 40
	}
	c := prefill(s, 1, 0, long, 200)
	s.Release(1)
	d := prefill(s, 1, 0, long, 1)
	if diff := maxDiff(c, d); diff > 1e-5 {
		t.Errorf("long prefill one step vs token by token differs by %g", diff)
	}
}

// TestForwardPanicsOnBadRow checks that a row outside the state is reported
// as a caller bug with a message, not an index error deep inside.
func TestForwardPanicsOnBadRow(t *testing.T) {
	m, err := NewRandom(Config{Dim: 8, HiddenDim: 8, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 10, SeqLen: 4}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(1, nil)
	for _, r := range []Row{{Slot: 1}, {Pos: 4}, {Token: 10}, {Slot: -1}} {
		t.Run(fmt.Sprintf("%+v", r), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Forward(%+v) did not panic", r)
				}
			}()
			s.Forward([]Row{r}, nil)
		})
	}
}

// TestPathsAgreeOnQ8Prompt: on a CPU with the amx path, a 40-token prompt
// of a Q8_0 model (two whole sets of sixteen rows through the AMX tiles,
// eight through the avx512 kernels) gives the avx512 path's logits bit
// for bit, every position.
func TestPathsAgreeOnQ8Prompt(t *testing.T) {
	paths := kernels.Paths()
	if !slices.Contains(paths, "amx") {
		t.Skipf("no amx path on this CPU (paths %v)", paths)
	}
	base, err := NewRandom(Config{Dim: 64, HiddenDim: 160, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}, 9, true)
	if err != nil {
		t.Fatal(err)
	}
	m := randomQuantModel(t, base, kernels.Q8_0, 5)
	const n = 40
	logits := map[string][][]float32{}
	for _, path := range []string{"amx", "avx512"} {
		pool, err := kernels.NewPoolOpts(2, kernels.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		rows := make([]Row, n)
		out := make([][]float32, n)
		for i := range rows {
			rows[i] = Row{Pos: i, Token: (i*31 + 7) % m.Config.Vocab, Logits: true}
			out[i] = make([]float32, m.Config.Vocab)
		}
		m.NewState(1, pool).Forward(rows, out)
		logits[path] = out
	}
	if d := cmp.Diff(logits["avx512"], logits["amx"]); d != "" {
		t.Errorf("amx logits differ from avx512 (-avx512 +amx):\n%s", d)
	}
}
