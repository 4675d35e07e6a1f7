package train

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// benchShapes are kiln-tiny's shape and stories110M's (dim 768, 12 layers
// of 12 heads, hidden 2048, vocabulary 32000), with random F32 weights.
func benchShapes() map[string]llama.Config {
	s110 := llama.Config{Dim: 768, HiddenDim: 2048, Layers: 12, Heads: 12, KVHeads: 12, Vocab: 32000, SeqLen: 1024}
	tiny := llama.TinyConfig()
	tiny.SeqLen = 1024
	return map[string]llama.Config{"kiln-tiny": tiny, "stories110M": s110}
}

// BenchmarkStep is one optimizer step (forward with activations kept,
// backward, AdamW update; default targets q, k, v, o, rank 16) on a
// sequence of n tokens whose second half is the target, against the
// trainer's forward pass alone (the loss of the same tokens: logits of the
// target rows included) and the serving forward (one prefill of the same n
// tokens through llama.State, logits of the last row only).
// It reports the activation bytes the step keeps and the heap the step
// allocated at most.
func BenchmarkStep(b *testing.B) {
	for _, name := range []string{"kiln-tiny", "stories110M"} {
		c := benchShapes()[name]
		m, err := llama.NewRandom(c, 1, true)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{64, 256, 1024} {
			r := rand.New(rand.NewPCG(1, 2))
			ids := make([]int, n)
			target := make([]bool, n)
			for i := range ids {
				ids[i], target[i] = r.IntN(c.Vocab), i >= n/2
			}
			b.Run(fmt.Sprintf("%s/tokens=%d/train_step", name, n), func(b *testing.B) {
				pool := kernels.NewPool(0)
				defer pool.Close()
				tr, err := New(m, pool, DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				seq := Sequence{IDs: ids, Target: target}
				runtime.GC()
				cpu := cpuTime()
				for b.Loop() {
					if _, err := tr.Step(seq); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				mods, _ := ParseModules(DefaultConfig().TargetModules)
				b.ReportMetric(float64(ActivationBytes(c, 16, mods, n))/(1<<20), "act-MiB")
				b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MiB")
			})
			b.Run(fmt.Sprintf("%s/tokens=%d/train_forward", name, n), func(b *testing.B) {
				pool := kernels.NewPool(0)
				defer pool.Close()
				tr, err := New(m, pool, DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				seq := Sequence{IDs: ids, Target: target}
				cpu := cpuTime()
				for b.Loop() {
					if _, err := tr.Loss(seq); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
			b.Run(fmt.Sprintf("%s/tokens=%d/serve_forward", name, n), func(b *testing.B) {
				pool := kernels.NewPool(0)
				defer pool.Close()
				st := m.NewState(1, pool)
				rows := make([]llama.Row, n)
				for i, id := range ids {
					rows[i] = llama.Row{Pos: i, Token: id, Logits: i == n-1}
				}
				logits := [][]float32{make([]float32, c.Vocab)}
				cpu := cpuTime()
				for b.Loop() {
					st.Forward(rows, logits)
					st.Release(0)
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far. On a machine
// shared with other work, CPU time per operation is steadier than wall
// time (the ratio of two CPU times is what the benchmarks compare).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64((cpuTime()-since).Milliseconds())/float64(b.N), "cpu-ms/op")
}
