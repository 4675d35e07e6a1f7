package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/kernels"
	"github.com/kiln-ai/kiln/telemetry"
)

// exclusiveRunner is what a training job needs of the engine: operation
// records and exclusive ownership, with writer priority, for one
// optimizer step at a time.
type exclusiveRunner interface {
	BeginOperation(kind timing.OpKind, reason string, parent uint64, detail func(*engine.Operation)) *engine.Operation
	EndOperation(op *engine.Operation, err error)
	Exclusive(ctx context.Context, op *engine.Operation, fn func() error) error
}

// BeginOperation implements exclusiveRunner.
func (g engineGenerator) BeginOperation(kind timing.OpKind, reason string, parent uint64, detail func(*engine.Operation)) *engine.Operation {
	return g.e.BeginOperation(kind, reason, parent, detail)
}

// EndOperation implements exclusiveRunner.
func (g engineGenerator) EndOperation(op *engine.Operation, err error) { g.e.EndOperation(op, err) }

// Exclusive implements exclusiveRunner.
func (g engineGenerator) Exclusive(ctx context.Context, op *engine.Operation, fn func() error) error {
	return g.e.Exclusive(ctx, op, fn)
}

// stepTimeout bounds one optimizer step's wait for ownership and its work.
const stepTimeout = 10 * time.Minute

// runTrainJob trains j's adapter, one optimizer step per example per
// epoch, each step inside Engine.Exclusive with the training phase open (so
// streams keep flowing between steps), then writes the adapter under the
// adapter dir and, with auto_load, swaps it in. The job and each step are
// engine operations (telemetry makes them a kiln.training_job span with
// kiln.training_step children that stall spans link to).
func (s *Server) runTrainJob(ctx context.Context, j *trainJob) (err error) {
	ex, ok := s.gen.(exclusiveRunner)
	if !ok {
		return errors.New("this engine cannot train (no exclusive ownership)")
	}
	job := ex.BeginOperation(timing.OpTrainingJob, "sft", 0, func(op *engine.Operation) {
		op.Training = timing.TrainingDetail{Job: j.id, Type: "sft", Steps: j.total, Tokens: j.tokens, Epochs: j.cfg.Epochs}
	})
	defer func() {
		status := telemetry.TrainingCompleted
		if err != nil {
			status = telemetry.TrainingFailed
			if errors.Is(err, errJobCancelled) {
				status = telemetry.TrainingCancelled
			}
		}
		job.Training.Status = status
		job.Training.Adapter = j.adapter
		if status == telemetry.TrainingCancelled {
			job.Outcome = timing.OutcomeCancelled
			ex.EndOperation(job, nil)
			return
		}
		ex.EndOperation(job, err)
	}()
	pool := kernels.NewPool(s.cfg.Threads)
	defer pool.Close()
	tr, err := train.New(s.model.Model, pool, j.cfg)
	if err != nil {
		return err
	}
	for e := range j.cfg.Epochs {
		for _, seq := range j.seqs {
			if ctx.Err() != nil {
				return errJobCancelled
			}
			if err := s.trainStep(ctx, ex, job, tr, seq, j, e+1); err != nil {
				if ctx.Err() != nil {
					return errJobCancelled
				}
				return err
			}
		}
	}
	if err := train.WritePEFT(s.outputDir(j.outputName), tr.Adapter(), s.modelID); err != nil {
		return err
	}
	s.train.mu.Lock()
	j.adapter = j.outputName
	s.train.mu.Unlock()
	if j.autoLoad {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), swapTimeout)
		defer cancel()
		if err := s.activate(sctx, j.outputName, "training"); err != nil {
			return fmt.Errorf("the adapter was written but auto_load failed: %w", err)
		}
	}
	return nil
}

// trainStep runs one optimizer step under exclusive ownership, as an
// operation of the job's, and records its loss in j.
func (s *Server) trainStep(ctx context.Context, ex exclusiveRunner, job *engine.Operation, tr *train.Trainer, seq train.Sequence, j *trainJob, epoch int) error {
	step := tr.Steps() + 1
	op := ex.BeginOperation(timing.OpTrainingStep, "sft", job.ID, func(op *engine.Operation) {
		op.Training = timing.TrainingDetail{Job: j.id, Type: "sft", Step: step, Steps: j.total, Epoch: epoch,
			Epochs: j.cfg.Epochs, Tokens: len(seq.IDs)}
	})
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	var loss float64
	err := ex.Exclusive(sctx, op, func() error {
		if s.train.stepHold != nil {
			s.train.stepHold()
		}
		var err error
		loss, err = tr.Step(seq)
		return err
	})
	op.Training.Loss, op.Training.Slices = loss, 1
	ex.EndOperation(op, err)
	if err != nil {
		return fmt.Errorf("step %d: %w", step, err)
	}
	q := &s.train
	q.mu.Lock()
	j.step, j.epoch = step, epoch
	j.losses = append(j.losses, loss)
	q.stats.Steps++
	q.mu.Unlock()
	return nil
}
