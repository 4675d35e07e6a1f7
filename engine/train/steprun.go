package train

import (
	"errors"
	"math"
	"time"
)

// ErrSuperseded means a StepRun can no longer continue: the trainer began
// another step or ran another pass (Loss, Greedy) over the activations the
// run was keeping.
var ErrSuperseded = errors.New("train: the step was superseded by another use of the trainer")

// StepRun is one optimizer step in progress: the units of its forward,
// loss and backward pass, then the optimizer update, run by Next in bounded
// slices so that a caller holding a lock for each slice can release it in
// between. The gradient, the loss and the update are the same however the
// step is sliced (the units are planned before any runs and do not depend
// on the budgets). Like the trainer's, its calls must not overlap; they
// may come from different goroutines when something orders them (the lock
// a caller holds for each slice).
type StepRun struct {
	t      *Trainer
	pass   *pass[float32]
	gen    int
	slices int
	update unit // the optimizer's unit, after the pass's
}

// Begin checks seq and plans a step on it without running any of it; seq
// must not change until the run is done. The step takes effect (the
// adapter changes, Steps counts it) when its last unit runs; a StepRun
// left unfinished changes nothing but the trainer's scratch.
func (t *Trainer) Begin(seq Sequence) (*StepRun, error) {
	if err := t.Check(seq); err != nil {
		return nil, err
	}
	r := &StepRun{t: t, gen: t.claim(), pass: t.net.begin(seq.IDs, seq.Target, true)}
	r.update = unit{ph: phUpdate, work: t.updateWork()}
	return r, nil
}

// Next runs units of the step until about budget of wall time (the
// trainer's clock) has passed: it always runs at least one unit, and
// before each later one it stops if the time spent so far plus the unit's
// predicted time (its estimated work at the rate measured for its kind)
// would exceed budget. Budget zero or less runs the whole remaining step.
// On a finished run it does nothing.
func (r *StepRun) Next(budget time.Duration) error {
	if r.gen != r.t.gen {
		return ErrSuperseded
	}
	if !r.done() {
		r.slices++
		runSlice(r, budget, r.t.now, &r.t.rates)
	}
	return nil
}

// unitRunner is work cut into units that run in order.
type unitRunner interface {
	done() bool
	peek() unit // the next unit
	step()      // runs the next unit
}

// runSlice runs units of w as StepRun.Next describes, timing each with now
// into rates, and returns how many it ran.
func runSlice(w unitRunner, budget time.Duration, now func() time.Time, rates *unitRates) int {
	start := now()
	last, n := start, 0
	for ; !w.done(); n++ {
		u := w.peek()
		if spent := last.Sub(start); n > 0 && budget > 0 &&
			(spent >= budget || spent+rates.predict(u) > budget) {
			break
		}
		w.step()
		end := now()
		rates.observe(u, end.Sub(last))
		last = end
	}
	return n
}

// Done reports whether the whole step, update included, has run.
func (r *StepRun) Done() bool { return r.done() }

func (r *StepRun) done() bool { return r.pass.at > len(r.pass.units) }

// Loss is the step's loss before its update, the mean cross-entropy of its
// target tokens; it is final once the classifier's units have run (always
// by Done).
func (r *StepRun) Loss() float64 { return r.pass.loss }

// Progress is the units run so far and in all: the embedding, the row
// chunks of each layer's forward, the classifier's chunks of target rows,
// the row chunks of each layer's three backward phases, and the update.
func (r *StepRun) Progress() (done, total int) {
	return r.pass.at, len(r.pass.units) + 1
}

// Slices is the number of Next calls that ran work.
func (r *StepRun) Slices() int { return r.slices }

func (r *StepRun) peek() unit {
	if r.pass.done() {
		return r.update
	}
	return r.pass.peek()
}

// step runs the pass's next unit, or the update after the pass's last.
func (r *StepRun) step() {
	t := r.t
	u := r.peek()
	if !r.pass.done() {
		r.pass.step()
	} else {
		t.opt.step(t.params, t.grads, t.cfg.LearningRate)
		t.steps++
		r.pass.at++
	}
	if t.cost != nil {
		t.cost(u.work)
	}
}

// updateWork is the update unit's estimated work: a few operations a
// parameter.
func (t *Trainer) updateWork() int64 { return 8 * int64(t.adapter.Params()) }

// unitRates are the measured wall times of each phase's units, in
// nanoseconds per estimated multiply-add, smoothed over the last few
// units; they persist from step to step.
type unitRates [numPhases]float64

// predict is u's expected duration, zero for a phase not yet measured.
func (r *unitRates) predict(u unit) time.Duration {
	return time.Duration(math.Ceil(r[u.ph] * float64(u.work)))
}

// observe folds u's measured duration d into its phase's rate: an
// exponential average, so that a unit slowed by a neighbour's load moves
// the prediction but does not set it.
func (r *unitRates) observe(u unit, d time.Duration) {
	if u.work <= 0 || d < 0 {
		return
	}
	rate := float64(d) / float64(u.work)
	if r[u.ph] == 0 {
		r[u.ph] = rate
		return
	}
	r[u.ph] += (rate - r[u.ph]) / 4
}
