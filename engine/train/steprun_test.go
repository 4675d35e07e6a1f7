package train

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// sliceTrainer is a float32 trainer of every projection on m whose
// layers run in row chunks of chunk (0: the trainer's own), with a
// 40-token sequence half of which is the target.
func sliceTrainer(t *testing.T, m *llama.Model, pool *kernels.Pool, chunk int) (*Trainer, Sequence) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.LoraRank, cfg.LoraAlpha, cfg.LearningRate = 4, 8, 1e-2
	cfg.TargetModules = []string{"q", "k", "v", "o", "gate", "up", "down"}
	tr, err := New(m, pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr.net.chunk = chunk
	ids, target := sequenceCase(m.Config, 40, 3)
	return tr, Sequence{IDs: ids, Target: target}
}

// stepSliced runs one step on seq in slices of budget and returns its loss
// and the number of slices.
func stepSliced(t *testing.T, tr *Trainer, seq Sequence, budget time.Duration) (float64, int) {
	t.Helper()
	r, err := tr.Begin(seq)
	if err != nil {
		t.Fatal(err)
	}
	for !r.Done() {
		if err := r.Next(budget); err != nil {
			t.Fatal(err)
		}
	}
	return r.Loss(), r.Slices()
}

// TestSlicedStepIsBitIdentical runs three optimizer steps (AdamW, every
// projection targeted) unsliced and in slices of several budgets, with
// layers cut into row chunks, for every architecture: the losses, the
// gradients and the adapter after every step must be equal bit for bit.
func TestSlicedStepIsBitIdentical(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	budgets := []time.Duration{time.Nanosecond, 20 * time.Microsecond, 300 * time.Microsecond, time.Hour}
	for _, ac := range archCases() {
		t.Run(ac.name, func(t *testing.T) {
			m := newCaseModel(t, ac)
			ref, seq := sliceTrainer(t, m, pool, 8)
			trs := make([]*Trainer, len(budgets))
			for i := range trs {
				trs[i], _ = sliceTrainer(t, m, pool, 8)
			}
			for step := range 3 {
				want, err := ref.Step(seq)
				if err != nil {
					t.Fatal(err)
				}
				for i, tr := range trs {
					got, n := stepSliced(t, tr, seq, budgets[i])
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Errorf("step %d in slices of %v: loss %v, unsliced %v", step+1, budgets[i], got, want)
					}
					if !sameBits(ref.net.g, tr.net.g) || !sameBits(&ref.adapter.w, &tr.adapter.w) {
						t.Errorf("step %d in slices of %v: the gradients or the adapter differ from the unsliced step's", step+1, budgets[i])
					}
					if done, total := tr.lastProgress(seq); budgets[i] == time.Nanosecond && n != total {
						t.Errorf("step %d in slices of 1ns: %d slices for %d units (%d done)", step+1, n, total, done)
					}
				}
			}
			if ref.Steps() != 3 || trs[0].Steps() != 3 {
				t.Errorf("Steps %d and %d, want 3", ref.Steps(), trs[0].Steps())
			}
		})
	}
}

// lastProgress is the unit count of a step on seq (planned afresh).
func (t *Trainer) lastProgress(seq Sequence) (done, total int) {
	r, _ := t.Begin(seq)
	return r.Progress()
}

// TestNextStopsAtBudget drives Next with a fake clock under which every
// unit takes its estimated work in nanoseconds, so that after one step
// the measured rates, and the predictions, are exact: each Next must run
// exactly the units that greedily fit its budget (at least one), and a
// budget of zero the whole step.
func TestNextStopsAtBudget(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	tr, seq := sliceTrainer(t, newCaseModel(t, archCases()[0]), pool, 4)
	var run *StepRun
	var at []time.Duration // at[i]: the clock once units [0, i) have run
	tr.SetClock(func() time.Time {
		done, _ := run.Progress()
		return time.Unix(1e9, 0).Add(at[done])
	})
	begin := func() []time.Duration {
		var err error
		if run, err = tr.Begin(seq); err != nil {
			t.Fatal(err)
		}
		works := []time.Duration{}
		for _, u := range append(slices.Clone(run.pass.units), run.update) {
			works = append(works, time.Duration(u.work))
		}
		at = make([]time.Duration, len(works)+1)
		for i, w := range works {
			at[i+1] = at[i] + w
		}
		return works
	}
	begin()
	if err := run.Next(0); err != nil || !run.Done() || run.Slices() != 1 {
		t.Fatalf("Next(0): error %v, done %v after %d slices; want the whole step in one", err, run.Done(), run.Slices())
	}
	works := begin()
	if _, total := run.Progress(); total < 30 {
		t.Fatalf("%d units: too few for the test to mean much", total)
	}
	for _, budget := range []time.Duration{1, works[1] / 2, 3 * slices.Max(works), 40 * slices.Max(works)} {
		works := begin()
		want := packUnits(works, budget)
		var got []int
		for !run.Done() {
			before, _ := run.Progress()
			if err := run.Next(budget); err != nil {
				t.Fatal(err)
			}
			after, _ := run.Progress()
			got = append(got, after-before)
		}
		if !slices.Equal(got, want) {
			t.Errorf("budget %v: units per Next %v, want %v", budget, got, want)
		}
		if run.Slices() != len(want) {
			t.Errorf("budget %v: Slices %d, want %d", budget, run.Slices(), len(want))
		}
	}
}

// packUnits is how many units of the given durations each slice of budget
// runs: at least one, then as many more as fit.
func packUnits(works []time.Duration, budget time.Duration) []int {
	var out []int
	for i := 0; i < len(works); {
		n, spent := 0, time.Duration(0)
		for i < len(works) && (n == 0 || spent+works[i] <= budget) {
			spent += works[i]
			i++
			n++
		}
		out = append(out, n)
	}
	return out
}

// TestStepRunLifecycle checks Begin's validation, a finished run's Next,
// Progress's counts and a run superseded by another pass.
func TestStepRunLifecycle(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	tr, seq := sliceTrainer(t, newCaseModel(t, archCases()[0]), pool, 8)
	if _, err := tr.Begin(Sequence{IDs: seq.IDs, Target: make([]bool, len(seq.IDs))}); !errors.Is(err, ErrNoAssistant) {
		t.Errorf("Begin on a sequence without targets: %v, want ErrNoAssistant", err)
	}
	r, err := tr.Begin(seq)
	if err != nil {
		t.Fatal(err)
	}
	// 40 rows in chunks of 8 for the forward and the three backward
	// phases of both layers, 20 target rows in three, the embedding
	// and the update.
	if done, total := r.Progress(); done != 0 || total != 2*4*5+3+2 {
		t.Errorf("Progress before any Next: %d of %d, want 0 of %d", done, total, 2*4*5+3+2)
	}
	if err := r.Next(time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	if done, _ := r.Progress(); done != 1 || r.Done() || tr.Steps() != 0 {
		t.Errorf("after one 1ns slice: %d units done, Done %v, Steps %d; want 1, false, 0", done, r.Done(), tr.Steps())
	}
	if _, err := tr.Loss(seq); err != nil {
		t.Fatal(err)
	}
	if err := r.Next(0); !errors.Is(err, ErrSuperseded) {
		t.Errorf("Next after Loss: %v, want ErrSuperseded", err)
	}
	r, _ = tr.Begin(seq)
	if err := r.Next(0); err != nil || !r.Done() || tr.Steps() != 1 {
		t.Fatalf("Next(0): %v, Done %v, Steps %d", err, r.Done(), tr.Steps())
	}
	if err := r.Next(0); err != nil || r.Slices() != 1 || tr.Steps() != 1 {
		t.Errorf("Next on a finished run: %v, %d slices, Steps %d; want nil, 1, 1", err, r.Slices(), tr.Steps())
	}
}

// TestRunSliced runs a job unsliced and with RunOptions.Slice: the losses
// and the adapter must be identical, and Wrap called once a slice; a
// context cancelled between slices must end the run with the step
// abandoned and the adapter untouched.
func TestRunSliced(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	m := newCaseModel(t, archCases()[3])
	ref, seq := sliceTrainer(t, m, pool, 8)
	want, err := ref.Run(context.Background(), []Sequence{seq}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := sliceTrainer(t, m, pool, 8)
	calls := 0
	wrap := func(_ context.Context, slice func() error) error { calls++; return slice() }
	got, err := tr.Run(context.Background(), []Sequence{seq}, RunOptions{Wrap: wrap, Slice: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || !sameBits(&ref.adapter.w, &tr.adapter.w) {
		t.Errorf("sliced losses %v, unsliced %v (or the adapters differ)", got, want)
	}
	if _, units := tr.lastProgress(seq); calls != len(want)*units {
		t.Errorf("Wrap called %d times, want %d (a unit a slice over %d steps)", calls, len(want)*units, len(want))
	}

	tr, _ = sliceTrainer(t, m, pool, 8)
	before := slices.Clone(tr.params[0])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls = 0
	cancelling := func(_ context.Context, slice func() error) error {
		if calls++; calls == 3 {
			cancel()
		}
		return slice()
	}
	losses, err := tr.Run(ctx, []Sequence{seq}, RunOptions{Wrap: cancelling, Slice: time.Nanosecond})
	if !errors.Is(err, context.Canceled) || len(losses) != 0 || calls != 3 {
		t.Errorf("cancelled at the third slice: losses %v, error %v after %d slices", losses, err, calls)
	}
	if tr.Steps() != 0 || !slices.Equal(before, tr.params[0]) {
		t.Errorf("a step cut short changed the adapter (Steps %d)", tr.Steps())
	}
}
