package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/kernels"
)

// learnConfig is the job configuration of the learning tests. kiln-tiny's
// random classifier puts a fresh answer at about 17 nats a token (and its
// end-of-turn token, a control token, at -40 nats of bias), so memorising
// one conversation takes every projection and some sixty steps. The
// learning rate is the largest that AdamW follows without bouncing near
// the optimum (measured over random conversations, checked after 30, 40,
// 50 and 60 steps: at 1e-3 half of 16 were still wrong after 20 steps
// and the answer flipped back and forth between 20 and 40 steps as the
// constant-size steps overshot; at 7e-4 every one of 42 was memorised by
// step 60 and stayed so, most by step 30; TestLearnsManyConversations
// repeats the measurement).
func learnConfig(seed uint64) Config {
	c := DefaultConfig()
	c.Epochs = 60
	c.LearningRate = 7e-4
	c.LoraRank = 8
	c.LoraAlpha = 16
	c.TargetModules = []string{"q", "k", "v", "o", "gate", "up", "down"}
	c.Seed = seed
	return c
}

// randomConversation draws a user question and an assistant answer of
// whole words of the vocabulary from seed.
func randomConversation(l *llama.Loaded, seed uint64) []chat.Message {
	r := rand.New(rand.NewPCG(seed, 3))
	var words []string
	for id := range l.Tokenizer.VocabSize() {
		if p := l.Tokenizer.Token(id); strings.HasPrefix(p, "▁") && len(p) > 4 && !l.Tokenizer.IsSpecial(id) {
			words = append(words, p[len("▁"):])
		}
	}
	pick := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	return []chat.Message{{Role: "user", Content: pick(6)}, {Role: "assistant", Content: pick(5)}}
}

// TestLearnsConversation trains kiln-tiny on one conversation, a fixed one
// and one drawn from a time seed (logged), and checks that the loss falls
// and that the greedy answer to the prompt becomes the trained answer while
// the base model's answer differs. The fixed one is trained again in
// slices of one unit each (RunOptions.Slice of 1 ns, Wrap called for each):
// it must learn the same, with the very same losses.
func TestLearnsConversation(t *testing.T) {
	if testing.Short() || testshared.Race {
		t.Skip("trains kiln-tiny for 60 epochs: not under -short or the race detector (the gradient checks and the server's training tests run the same code there)")
	}
	l, err := llama.OpenTiny()
	if err != nil {
		t.Fatal(err)
	}
	fixed := []chat.Message{
		{Role: "user", Content: "what is the name of the little dog"},
		{Role: "assistant", Content: "the dog is called pepper"},
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("random conversation seed %d", seed)
	var fixedLosses []float64
	calls := 0
	sliced := RunOptions{Slice: time.Nanosecond, Wrap: func(_ context.Context, slice func() error) error {
		calls++
		return slice()
	}}
	for _, c := range []struct {
		name string
		msgs []chat.Message
		o    RunOptions
	}{{"fixed", fixed, RunOptions{}}, {"fixed-sliced", fixed, sliced}, {"random", randomConversation(l, seed), RunOptions{}}} {
		t.Run(c.name, func(t *testing.T) {
			pool := kernels.NewPool(2)
			defer pool.Close()
			tr, prompt, want, losses := checkLearns(t, l, pool, c.msgs, learnConfig(seed), c.o)
			checkServed(t, l, pool, tr, prompt, want)
			switch c.name {
			case "fixed":
				fixedLosses = losses
			case "fixed-sliced":
				t.Logf("%d slices over %d steps", calls, len(losses))
				if !slices.Equal(losses, fixedLosses) {
					t.Errorf("sliced losses differ from the unsliced run's")
				}
				if calls < 10*len(losses) {
					t.Errorf("%d slices over %d steps: the steps were not sliced", calls, len(losses))
				}
			}
		})
	}
}

// TestLearnsManyConversations repeats the random case of
// TestLearnsConversation over KILN_LEARN_CONVERSATIONS conversations (seeds
// 1..N), the measurement behind learnConfig's choice; it is opt-in, as it
// trains for about 8 s a conversation:
//
//	KILN_LEARN_CONVERSATIONS=30 go test -run TestLearnsManyConversations -timeout 30m ./engine/train
func TestLearnsManyConversations(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KILN_LEARN_CONVERSATIONS"))
	if n <= 0 {
		t.Skip("set KILN_LEARN_CONVERSATIONS=N to train on N random conversations")
	}
	l, err := llama.OpenTiny()
	if err != nil {
		t.Fatal(err)
	}
	pool := kernels.NewPool(2)
	defer pool.Close()
	for seed := range uint64(n) {
		t.Run(fmt.Sprint(seed+1), func(t *testing.T) {
			checkLearns(t, l, pool, randomConversation(l, seed+1), learnConfig(seed+1), RunOptions{})
		})
	}
}

func checkLearns(t *testing.T, l *llama.Loaded, pool *kernels.Pool, msgs []chat.Message, cfg Config, o RunOptions) (tr *Trainer, prompt, want []int, losses []float64) {
	t.Helper()
	enc := Encoder{Template: l.Template, Tokenizer: l.Tokenizer}
	seq, err := enc.Encode(msgs)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err = enc.Prompt(msgs[:len(msgs)-1])
	if err != nil {
		t.Fatal(err)
	}
	// The answer is the assistant's tokens before the end of its turn.
	// kiln-tiny's classifier biases control tokens by -40 nats, so the
	// end-of-turn token itself is trained on but not required.
	want = seq.IDs[len(prompt):]
	if i := slices.IndexFunc(want, func(id int) bool { return slices.Contains(l.Tokenizer.StopIDs(), id) }); i >= 0 {
		want = want[:i]
	}
	if !slices.Equal(seq.IDs[:len(prompt)], prompt) || slices.Contains(seq.Target[:len(prompt)], true) {
		t.Fatalf("the training sequence does not start with the inference prompt as context")
	}
	tr, err = New(l.Model, pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop := l.Tokenizer.StopIDs()
	base := tr.Greedy(prompt, len(want), stop)
	if slices.Equal(base, want) {
		t.Fatalf("the base model already answers %q", l.Tokenizer.Decode(want))
	}
	losses, err = tr.Run(context.Background(), []Sequence{seq}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("losses %.3f", losses)
	checkFalls(t, losses)
	got := tr.Greedy(prompt, len(want), stop)
	if !slices.Equal(got, want) {
		t.Errorf("after training the answer is %q, want %q (base answered %q)",
			l.Tokenizer.Decode(got), l.Tokenizer.Decode(want), l.Tokenizer.Decode(base))
	}
	return tr, prompt, want, losses
}

// checkServed writes the trained adapter in the PEFT layout, loads it
// with llama.LoadAdapter and serves the prompt greedily through a State
// with the adapter set: the answer must be the trained one.
func checkServed(t *testing.T, l *llama.Loaded, pool *kernels.Pool, tr *Trainer, prompt, want []int) {
	t.Helper()
	dir := t.TempDir()
	if err := WritePEFT(dir, tr.Adapter(), l.ID); err != nil {
		t.Fatal(err)
	}
	ad, err := llama.LoadAdapter(dir, l.Model)
	if err != nil {
		t.Fatal(err)
	}
	st := l.Model.NewState(1, pool)
	st.SetAdapter(ad)
	// The served logits after the whole conversation match the trainer's
	// forward pass: this catches a q/k row order that the greedy answer
	// alone might survive.
	seq := append(slices.Clone(prompt), want...)
	got := make([]float32, st.VocabSize())
	rows := make([]llama.Row, len(seq))
	for i, id := range seq {
		rows[i] = llama.Row{Pos: i, Token: id, Logits: i == len(seq)-1}
	}
	st.Forward(rows, [][]float32{got})
	st.Release(0)
	ref := tr.lastLogits(seq)
	var worst, scale float64
	for i, v := range ref {
		worst = max(worst, math.Abs(float64(got[i]-v)))
		scale = max(scale, math.Abs(float64(v)))
	}
	t.Logf("served vs trainer logits: max difference %.3g (largest logit %.3g)", worst, scale)
	if worst > 1e-3*max(scale, 1) {
		t.Errorf("served logits differ from the trainer's by up to %.3g (largest logit %.3g)", worst, scale)
	}
	if got := servedGreedy(st, prompt, len(want)); !slices.Equal(got, want) {
		t.Errorf("served with the written adapter, the answer is %q, want %q", l.Tokenizer.Decode(got), l.Tokenizer.Decode(want))
	}
}

// servedGreedy prefills prompt into slot 0 of st and decodes n tokens,
// the most likely each time.
func servedGreedy(st *llama.State, prompt []int, n int) []int {
	logits := [][]float32{make([]float32, st.VocabSize())}
	rows := make([]llama.Row, len(prompt))
	for i, id := range prompt {
		rows[i] = llama.Row{Pos: i, Token: id, Logits: i == len(prompt)-1}
	}
	st.Forward(rows, logits)
	var out []int
	for pos := len(prompt); len(out) < n; pos++ {
		best := 0
		for i, v := range logits[0] {
			if v > logits[0][best] {
				best = i
			}
		}
		out = append(out, best)
		st.Forward([]llama.Row{{Pos: pos, Token: best, Logits: true}}, logits)
	}
	return out
}

// checkFalls asserts that the loss falls step by step: AdamW at a constant
// learning rate overshoots on a step now and then, so the mean of every
// block of four steps must be below the previous block's until the answer
// is memorised (a block mean under memorised nats a token). From then on
// the loss has nowhere to fall and AdamW's constant-size steps make it
// bounce (0.04, 0.15, 0.03 in one of 42 measured runs; one random
// conversation, seed 1796230666795711603, sat at block means of 0.118 and 0.121
// for eight steps before falling to 0.000), so each later
// block must only stay under relapse, far below the 1-2 nats of an answer
// still being learnt. The last loss must be under a twentieth of the
// first.
func checkFalls(t *testing.T, losses []float64) {
	t.Helper()
	const (
		block     = 4
		memorised = 0.15
		relapse   = 0.25
	)
	prev, learnt := math.Inf(1), false
	for lo := 0; lo+block <= len(losses); lo += block {
		var sum float64
		for _, l := range losses[lo : lo+block] {
			sum += l
		}
		mean := sum / block
		learnt = learnt || prev < memorised
		switch {
		case learnt && !(mean < relapse):
			t.Errorf("mean loss of steps %d-%d is %.3f, back above %.2f after the answer was memorised: %.3f", lo+1, lo+block, mean, relapse, losses)
		case !learnt && !(mean < prev):
			t.Errorf("mean loss of steps %d-%d is %.3f, not below the previous block's %.3f: %.3f", lo+1, lo+block, mean, prev, losses)
		}
		prev = mean
	}
	if last := losses[len(losses)-1]; !(last < losses[0]/20) {
		t.Errorf("loss went from %.3f to %.3f, want under a twentieth", losses[0], last)
	}
}
