package train

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
)

// errJobCancelled ends a job's step loop when its context is cancelled.
var errJobCancelled = errors.New("training job cancelled")

// runJob trains j's adapter, one optimizer step per example per epoch,
// each step an engine operation (a child of the job's) held in slices of
// at most the runner's Slice, so that the engine's forward invocations run
// between two slices; then writes the adapter into the adapter directory
// and, with AutoLoad, swaps it in through the engine's barrier.
func (r *Runner) runJob(ctx context.Context, j *Job) (err error) {
	e := r.cfg.Engine
	job := e.BeginOperation(timing.OpTrainingJob, "sft", 0, func(op *engine.Operation) {
		op.Training = timing.TrainingDetail{Job: j.ID, Type: "sft", Steps: j.Steps(), Tokens: j.Tokens(),
			Epochs: j.Config.Epochs, SliceLimit: r.cfg.Slice}
	})
	defer func() { r.endJob(job, j, err) }()
	tr, err := New(r.cfg.Model, r.cfg.Pool, j.Config)
	if err != nil {
		return err
	}
	tr.SetUnitCost(r.cfg.UnitCost)
	for epoch := range j.Config.Epochs {
		for _, seq := range j.Seqs {
			if ctx.Err() != nil {
				return errJobCancelled
			}
			if err := r.runStep(ctx, job, tr, seq, j, epoch+1); err != nil {
				if ctx.Err() != nil {
					return errJobCancelled
				}
				return err
			}
		}
	}
	if err := WritePEFT(filepath.Join(r.cfg.Adapters.Dir(), j.Output), tr.Adapter(), r.cfg.ModelID); err != nil {
		return err
	}
	r.mu.Lock()
	j.adapter = j.Output
	if j.AutoLoad {
		j.state = JobSwapping
	}
	r.mu.Unlock()
	if j.AutoLoad {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.SwapTimeout)
		defer cancel()
		if err := r.cfg.Adapters.Activate(sctx, e, j.Output, "training"); err != nil {
			return fmt.Errorf("the adapter was written but auto_load failed: %w", err)
		}
	}
	return nil
}

// endJob ends the job's operation with its status.
func (r *Runner) endJob(job *engine.Operation, j *Job, err error) {
	job.Training.Adapter = j.adapter
	switch {
	case err == nil:
		job.Training.Status = JobCompleted
	case errors.Is(err, errJobCancelled):
		job.Training.Status, job.Outcome = "cancelled", timing.OutcomeCancelled
		err = nil
	default:
		job.Training.Status = JobFailed
	}
	r.cfg.Engine.EndOperation(job, err)
}

// runStep runs one optimizer step as an operation of the job's: slice by
// slice, each under exclusive ownership, and records its loss in j.
func (r *Runner) runStep(ctx context.Context, job *engine.Operation, tr *Trainer, seq Sequence, j *Job, epoch int) error {
	e := r.cfg.Engine
	step := tr.Steps() + 1
	op := e.BeginOperation(timing.OpTrainingStep, "sft", job.ID, func(op *engine.Operation) {
		op.Training = timing.TrainingDetail{Job: j.ID, Type: "sft", Step: step, Steps: j.Steps(), Epoch: epoch,
			Epochs: j.Config.Epochs, Tokens: len(seq.IDs), SliceLimit: r.cfg.Slice}
	})
	run, err := tr.Begin(seq)
	if err == nil {
		r.progress(run)
		err = r.slices(ctx, op, run)
	}
	if err == nil {
		op.Training.Loss = run.Loss()
		op.Training.Slices = run.Slices()
	}
	e.EndOperation(op, err)
	if err != nil {
		return fmt.Errorf("step %d: %w", step, err)
	}
	r.mu.Lock()
	j.step, j.epoch, j.inStep = step, epoch, false
	j.losses = append(j.losses, run.Loss())
	r.stats.Steps++
	r.mu.Unlock()
	return nil
}

// slices runs run to its end, one exclusive hold of op per slice.
func (r *Runner) slices(ctx context.Context, op *engine.Operation, run *StepRun) error {
	for !run.Done() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sctx, cancel := context.WithTimeout(ctx, r.cfg.StepTimeout)
		err := r.cfg.Engine.Exclusive(sctx, op, func() error {
			if h := r.cfg.StepHook; h != nil {
				h()
			}
			return run.Next(r.cfg.Slice)
		})
		cancel()
		if err != nil {
			return err
		}
		r.progress(run)
	}
	return nil
}

// progress publishes run's progress to the status routes (they never read
// the run itself, which belongs to the worker).
func (r *Runner) progress(run *StepRun) {
	done, total := run.Progress()
	r.mu.Lock()
	if j := r.running; j != nil {
		j.stepDone, j.stepTotal, j.stepSlices, j.inStep = done, total, run.Slices(), !run.Done()
	}
	r.mu.Unlock()
}
