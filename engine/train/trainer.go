package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// Trainer trains one LoRA adapter on one model: each Step is one
// conversation, one forward and backward pass, one optimizer update. It
// belongs to one goroutine at a time.
type Trainer struct {
	m       *llama.Model
	cfg     Config
	adapter *Adapter
	net     *net[float32]
	opt     optimizer
	params  [][]float32
	grads   [][]float32
	steps   int
	now     func() time.Time // the clock StepRun.Next measures budgets by
	cost    func(work int64) // runs after each unit of a StepRun (SetUnitCost)
	rates   unitRates
	gen     int // counts the passes begun, so a StepRun knows it was superseded
}

// New makes a trainer with a fresh adapter (A from cfg.Seed, B zero). The
// products run on pool. Without TargetModules the targets are the model's
// default (DefaultModulesFor: on a hybrid such as Qwen3.5 the linear
// layers' qkv, z and out beside q, k, v and o).
func New(m *llama.Model, pool *kernels.Pool, cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mods := DefaultModulesFor(m.Config)
	if cfg.TargetModules != nil {
		mods, _ = ParseModules(cfg.TargetModules) // validated
	}
	a, err := NewAdapter(m.Config, cfg.LoraRank, cfg.LoraAlpha, mods, cfg.Seed)
	if err != nil {
		return nil, err
	}
	t := &Trainer{m: m, cfg: cfg, adapter: a, net: newNet(m, pool, &a.w), now: time.Now}
	a.w.each(func(p []float32) { t.params = append(t.params, p) })
	t.net.g.each(func(p []float32) { t.grads = append(t.grads, p) })
	t.opt = newOptimizer(cfg.Optimizer, t.params)
	return t, nil
}

// Adapter is the adapter being trained; it changes with every Step.
func (t *Trainer) Adapter() *Adapter { return t.adapter }

// Steps is the number of optimizer steps taken.
func (t *Trainer) Steps() int { return t.steps }

// SetClock makes StepRun.Next measure its budgets with now instead of
// time.Now (nil restores time.Now); tests drive slicing with a fake clock.
func (t *Trainer) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	t.now = now
}

// SetUnitCost makes every unit of a StepRun call cost with the unit's
// estimated work once it has run (nil: nothing). Tests under
// testing/synctest, where computing takes no time, sleep in it to give
// each unit a fake duration that the slicing then measures.
func (t *Trainer) SetUnitCost(cost func(work int64)) { t.cost = cost }

// claim marks the start of a pass over the trainer's activations, which
// supersedes any StepRun in progress, and returns the pass's generation.
func (t *Trainer) claim() int {
	t.gen++
	return t.gen
}

// Check reports why seq cannot be a training step: empty, no target,
// longer than the model's context, or a token outside the vocabulary.
func (t *Trainer) Check(seq Sequence) error {
	c := t.m.Config
	switch {
	case len(seq.IDs) != len(seq.Target):
		return fmt.Errorf("train: sequence has %d ids but %d target flags", len(seq.IDs), len(seq.Target))
	case len(seq.IDs) > c.SeqLen:
		return fmt.Errorf("train: conversation is %d tokens, longer than the model's context of %d", len(seq.IDs), c.SeqLen)
	case seq.Targets() == 0 || seq.Target[0] && seq.Targets() == 1:
		return ErrNoAssistant
	}
	for _, id := range seq.IDs {
		if id < 0 || id >= c.Vocab {
			return fmt.Errorf("train: token %d outside the vocabulary of %d", id, c.Vocab)
		}
	}
	return nil
}

// Step runs one optimizer step on seq and returns its loss before the
// update: the mean cross-entropy of its target tokens. It is Begin and one
// Next without a budget, so it computes what a sliced step does.
func (t *Trainer) Step(seq Sequence) (float64, error) {
	r, err := t.Begin(seq)
	if err != nil {
		return 0, err
	}
	if err := r.Next(0); err != nil {
		return 0, err
	}
	return r.Loss(), nil
}

// Loss is seq's loss under the current adapter, without an update: the
// forward and loss units of a step.
func (t *Trainer) Loss(seq Sequence) (float64, error) {
	if err := t.Check(seq); err != nil {
		return 0, err
	}
	t.claim()
	pa := t.net.begin(seq.IDs, seq.Target, false)
	pa.finish()
	return pa.loss, nil
}

// Progress is reported after every step of Run.
type Progress struct {
	Step, TotalSteps int // Step counts from 1
	Epoch            int // from 1
	Loss             float64
}

// RunOptions hook a Run into its caller.
type RunOptions struct {
	// Wrap runs each optimizer step, or each slice of one when Slice is
	// set (the server's holds exclusive device ownership for its
	// duration); nil calls it directly. An error from Wrap ends the run.
	Wrap func(ctx context.Context, step func() error) error
	// Slice, when positive, runs each step in slices of about this much
	// wall time (StepRun.Next's budget), each in its own Wrap call, so
	// that a caller's hold is released between slices; zero runs each
	// step in one Wrap call.
	Slice time.Duration
	// OnStep is called after each step, outside Wrap.
	OnStep func(Progress)
}

// Run trains for cfg.Epochs epochs over seqs, in order, one step per
// sequence, and returns the loss of every step. It stops between steps,
// or between the slices of one, when ctx ends, returning ctx's error with
// the losses so far (a step cut short leaves the adapter as it was).
func (t *Trainer) Run(ctx context.Context, seqs []Sequence, o RunOptions) ([]float64, error) {
	for i, s := range seqs {
		if err := t.Check(s); err != nil {
			return nil, fmt.Errorf("train: example %d: %w", i, err)
		}
	}
	wrap := o.Wrap
	if wrap == nil {
		wrap = func(_ context.Context, step func() error) error { return step() }
	}
	total := t.cfg.Epochs * len(seqs)
	losses := make([]float64, 0, total)
	for e := range t.cfg.Epochs {
		for _, s := range seqs {
			r, err := t.Begin(s)
			for err == nil && !r.Done() {
				if err := ctx.Err(); err != nil {
					return losses, err
				}
				ran := false
				err = wrap(ctx, func() error { ran = true; return r.Next(o.Slice) })
				if err == nil && !ran {
					// Without this the loop would wait forever for a step
					// that Wrap never runs.
					err = errors.New("train: Wrap returned without running the step")
				}
			}
			if err != nil {
				return losses, fmt.Errorf("train: step %d: %w", len(losses)+1, err)
			}
			losses = append(losses, r.Loss())
			if o.OnStep != nil {
				o.OnStep(Progress{Step: len(losses), TotalSteps: total, Epoch: e + 1, Loss: r.Loss()})
			}
		}
	}
	return losses, nil
}

// Greedy continues prompt with the adapted model, the most likely token
// at each step, until a token of stop or max tokens; it recomputes the whole
// sequence at every token (for tests and checks, not for serving).
func (t *Trainer) Greedy(prompt []int, maxTokens int, stop []int) []int {
	ids := append([]int(nil), prompt...)
	var out []int
	c := t.m.Config
	logits := make([]float32, c.Vocab)
	t.claim()
	for range maxTokens {
		if len(ids) >= c.SeqLen {
			break
		}
		t.net.forward(ids)
		n := len(ids)
		t.net.la.matmul(logits, t.m.Output, t.net.a.xf[(n-1)*c.Dim:n*c.Dim], 1)
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		out = append(out, best)
		ids = append(ids, best)
		for _, s := range stop {
			if s == best {
				return out
			}
		}
	}
	return out
}
