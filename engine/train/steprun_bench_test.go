package train

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// BenchmarkStepSliced is BenchmarkStep's train_step on kiln-tiny's shape
// unsliced, in slices of 100 ms (what a server would release its lock
// between) and of 1 ns (every unit its own slice: the cost of the slicing
// machinery alone), each reporting the slices a step and the longest
// slice. The interleaved case runs the three in turn each iteration, so
// that a noisy machine's drift falls on all of them alike, and reports the
// median ratio (of wall time, and of CPU time: cpu-ratio-...) of each
// sliced step's time to the unsliced one's, and of
// the unsliced step's to a step of whole layers (chunks of every row, as
// the trainer computed before steps were cut into units: the cost of the
// chunks themselves).
//
//	go test -run '^$' -bench StepSliced -benchtime 5x -count 5 ./engine/train
func BenchmarkStepSliced(b *testing.B) {
	c := benchShapes()["kiln-tiny"]
	m, err := llama.NewRandom(c, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{256, 1024} {
		seq := benchSequence(c, n)
		for _, bc := range []struct {
			name   string
			budget time.Duration
		}{{"unsliced", 0}, {"slice=100ms", 100 * time.Millisecond}, {"slice=1ns", time.Nanosecond}} {
			b.Run(fmt.Sprintf("tokens=%d/%s", n, bc.name), func(b *testing.B) {
				tr := benchTrainer(b, m)
				var longest time.Duration
				slices := 0
				cpu := cpuTime()
				for b.Loop() {
					d, k := benchStep(b, tr, seq, bc.budget)
					longest = max(longest, d)
					slices += k
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(slices)/float64(b.N), "slices/op")
				b.ReportMetric(float64(longest.Microseconds())/1e3, "max-slice-ms")
			})
		}
		b.Run(fmt.Sprintf("tokens=%d/interleaved", n), func(b *testing.B) {
			tr, whole := benchTrainer(b, m), benchTrainer(b, m)
			whole.net.chunk = n
			// unsliced, 100 ms slices, 1 ns slices, whole layers: each
			// iteration starts one further along, so that no variant
			// always follows the same one.
			run := []func(){
				func() { benchStep(b, tr, seq, 0) },
				func() { benchStep(b, tr, seq, 100*time.Millisecond) },
				func() { benchStep(b, tr, seq, time.Nanosecond) },
				func() { benchStep(b, whole, seq, 0) },
			}
			// Ratios of wall time, and of CPU time, which other work on
			// the machine disturbs less.
			var wall, cpu [3][]float64
			for i := 0; b.Loop(); i++ {
				var d, c [4]time.Duration
				for k := range run {
					v := (i + k) % len(run)
					t0, c0 := time.Now(), cpuTime()
					run[v]()
					d[v], c[v] = time.Since(t0), cpuTime()-c0
				}
				for j, r := range [3][2]int{{1, 0}, {2, 0}, {0, 3}} {
					wall[j] = append(wall[j], float64(d[r[0]])/float64(d[r[1]]))
					cpu[j] = append(cpu[j], float64(c[r[0]])/float64(c[r[1]]))
				}
			}
			for j, name := range []string{"ratio-100ms", "ratio-1ns", "ratio-chunked"} {
				b.ReportMetric(median(wall[j]), name)
				b.ReportMetric(median(cpu[j]), "cpu-"+name)
			}
		})
	}
}

func benchSequence(c llama.Config, n int) Sequence {
	r := rand.New(rand.NewPCG(1, 2))
	ids := make([]int, n)
	target := make([]bool, n)
	for i := range ids {
		ids[i], target[i] = r.IntN(c.Vocab), i >= n/2
	}
	return Sequence{IDs: ids, Target: target}
}

func benchTrainer(b *testing.B, m *llama.Model) *Trainer {
	pool := kernels.NewPool(0)
	b.Cleanup(pool.Close)
	tr, err := New(m, pool, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// benchStep runs one step in slices of budget and returns its longest
// slice and the number of slices.
func benchStep(b *testing.B, tr *Trainer, seq Sequence, budget time.Duration) (time.Duration, int) {
	r, err := tr.Begin(seq)
	if err != nil {
		b.Fatal(err)
	}
	var longest time.Duration
	for !r.Done() {
		t0 := time.Now()
		if err := r.Next(budget); err != nil {
			b.Fatal(err)
		}
		longest = max(longest, time.Since(t0))
	}
	return longest, r.Slices()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// BenchmarkStepSliced05B is the same comparison on a random model of
// Qwen2.5-0.5B's shape (896 wide, 24 layers, 14 query and 2 key/value
// heads, a 4,864-wide feed-forward, a 151,936-word vocabulary), where one
// unsliced step over a few hundred tokens holds the engine for tens of
// seconds: one step unsliced and one in 100 ms slices, alternated, with
// the slices a step takes and the longest. Minutes per iteration on two
// cores: run it with -benchtime 1x or 2x.
//
//	go test -run '^$' -bench StepSliced05B -benchtime 2x ./engine/train
func BenchmarkStepSliced05B(b *testing.B) {
	c := llama.Config{Dim: 896, HiddenDim: 4864, Layers: 24, Heads: 14, KVHeads: 2, Vocab: 151936, SeqLen: 1024}
	m, err := llama.NewRandom(c, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	seq := benchSequence(c, 256)
	tr := benchTrainer(b, m)
	var ratios []float64
	var whole, sliced, longest time.Duration
	n := 0
	for i := 0; b.Loop(); i++ {
		var d [2]time.Duration
		for k := range 2 {
			v := (i + k) % 2
			t0 := time.Now()
			l, s := benchStep(b, tr, seq, time.Duration(v)*100*time.Millisecond)
			d[v] = time.Since(t0)
			if v == 1 {
				longest, n = max(longest, l), s
			}
		}
		whole, sliced = whole+d[0], sliced+d[1]
		ratios = append(ratios, float64(d[1])/float64(d[0]))
	}
	b.ReportMetric(float64(whole.Milliseconds())/float64(b.N), "unsliced-ms")
	b.ReportMetric(float64(sliced.Milliseconds())/float64(b.N), "sliced-ms")
	b.ReportMetric(median(ratios), "ratio-100ms")
	b.ReportMetric(float64(n), "slices/step")
	b.ReportMetric(float64(longest.Microseconds())/1e3, "max-slice-ms")
}
