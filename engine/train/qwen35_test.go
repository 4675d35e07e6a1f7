package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/testshared"
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

// TestLearnsConversationQwen35 trains the tiny Qwen3.5 on one
// conversation, with LoRA on every projection kind of its layers (gated
// attention, Gated DeltaNet, feed-forward), whole and in slices of one
// unit: the loss falls, the greedy answer becomes the trained one, and
// the sliced run's losses are the unsliced run's bit for bit. When the
// adapter loader takes the linear layers' PEFT tensors, the written
// adapter served by llama inference answers the same.
func TestLearnsConversationQwen35(t *testing.T) {
	if testing.Short() || testshared.Race {
		t.Skip("trains the tiny Qwen3.5 for many epochs: not under -short or the race detector (TestGradientCheck's hybrid cases run the same code there)")
	}
	l := openQwen35(t)
	msgs := []chat.Message{
		{Role: "user", Content: "what is the name of the little dog"},
		{Role: "assistant", Content: "the dog is called pepper"},
	}
	cfg := learnConfig(1)
	cfg.Epochs = 20 // the loss is under 0.01 by step 17
	cfg.TargetModules = append(cfg.TargetModules, "qkv", "z", "out")
	var whole []float64
	for _, o := range []RunOptions{{}, {Slice: time.Nanosecond}} {
		pool := kernels.NewPool(2)
		tr, prompt, want, losses := checkLearns(t, l, pool, msgs, cfg, o)
		if whole == nil {
			whole = losses
			dir := t.TempDir()
			if err := WritePEFT(dir, tr.Adapter(), l.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := llama.LoadAdapter(dir, l.Model); err != nil {
				t.Logf("llama.LoadAdapter does not take this adapter yet (%v): served check skipped", err)
			} else {
				checkServed(t, l, pool, tr, prompt, want)
			}
		} else if !slices.Equal(losses, whole) {
			t.Errorf("sliced losses differ from the unsliced run's")
		}
		pool.Close()
	}
}
