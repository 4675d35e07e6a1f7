package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kiln-ai/kiln/engine/internal/testshared"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// openQwen35 opens the tiny Qwen3.5 of the shared reference models, or
// skips tb when they are absent.
func openQwen35(tb testing.TB) *llama.Loaded {
	tb.Helper()
	l, err := llama.Open(testshared.Require(tb, "models", "ref", "tiny-qwen35.hf"))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// TestForwardMatchesInferenceQwen35: the training forward's logits at
// every position of a sequence equal llama.State.Forward's on the tiny
// Qwen3.5 within 1e-4, whole and in row chunks of 7 (delta-rule blocks of
// 7 rows).
func TestForwardMatchesInferenceQwen35(t *testing.T) {
	l := openQwen35(t)
	pool := kernels.NewPool(2)
	defer pool.Close()
	c := l.Model.Config
	r := rand.New(rand.NewPCG(35, 1))
	ids := make([]int, 70)
	for i := range ids {
		ids[i] = r.IntN(c.Vocab)
	}
	st := l.Model.NewState(1, pool)
	rows := make([]llama.Row, len(ids))
	want := make([][]float32, len(ids))
	for i, id := range ids {
		rows[i] = llama.Row{Pos: i, Token: id, Logits: true}
		want[i] = make([]float32, c.Vocab)
	}
	st.Forward(rows, want)
	st.Release(0)
	for _, chunk := range []int{0, 7} {
		a, err := NewAdapter(c, 4, 8, DefaultModulesFor(c), 1)
		if err != nil {
			t.Fatal(err)
		}
		nt := newNet(l.Model, pool, &a.w)
		nt.chunk = chunk
		nt.forward(ids)
		got := make([]float32, c.Vocab)
		var worst float64
		for i := range ids {
			nt.la.matmul(got, l.Model.Output, nt.a.xf[i*c.Dim:(i+1)*c.Dim], 1)
			for j, v := range got {
				worst = max(worst, math.Abs(float64(v-want[i][j])))
			}
		}
		t.Logf("chunk %d: max logit difference %.3g", chunk, worst)
		if worst > 1e-4 {
			t.Errorf("chunk %d: training forward logits differ from inference by up to %.3g, want within 1e-4", chunk, worst)
		}
	}
}
