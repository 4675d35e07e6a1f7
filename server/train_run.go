package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/kernels"
	"github.com/kiln-ai/kiln/telemetry"
)

// exclusiveRunner is what a training job needs of the engine: exclusive
// ownership, with writer priority, for one optimizer step at a time.
type exclusiveRunner interface {
	Exclusive(ctx context.Context, p timing.Slot, fn func() error) error
}

// Exclusive implements exclusiveRunner.
func (g engineGenerator) Exclusive(ctx context.Context, p timing.Slot, fn func() error) error {
	return g.e.Exclusive(ctx, p, fn)
}

// stepTimeout bounds one optimizer step's wait for ownership and its work.
const stepTimeout = 10 * time.Minute

// runTrainJob trains j's adapter, one optimizer step per example per
// epoch, each step inside Engine.Exclusive with the training phase open (so
// streams keep flowing between steps), then writes the adapter under the
// adapter dir and, with auto_load, swaps it in. The job is a kiln.
// training_job span, each step a kiln.training_step child registered as a
// maintenance operation that stall spans link to.
func (s *Server) runTrainJob(ctx context.Context, j *trainJob) (err error) {
	_, span := s.tel.StartMaintenanceSpan(context.Background(), telemetry.SpanTrainingJob,
		attribute.String(telemetry.AttrTrainingJobID, j.id), attribute.String(telemetry.AttrTrainingType, "sft"),
		attribute.Int(telemetry.AttrTrainingTotalSteps, j.total), attribute.Int(telemetry.AttrTrainingTokens, j.tokens))
	defer func() {
		status := telemetry.TrainingCompleted
		if err != nil {
			status = telemetry.TrainingFailed
			if errors.Is(err, errJobCancelled) {
				status = telemetry.TrainingCancelled
			}
			span.SetStatus(codes.Error, err.Error())
		}
		span.SetAttributes(attribute.String(telemetry.AttrTrainingStatus, status))
		span.End()
		s.log.Info().Str("job_id", j.id).Str("status", status).Int("steps", len(j.losses)).Msg("training job ended")
	}()
	ex, ok := s.gen.(exclusiveRunner)
	if !ok {
		return errors.New("this engine cannot train (no exclusive ownership)")
	}
	pool := kernels.NewPool(s.cfg.Threads)
	defer pool.Close()
	tr, err := train.New(s.model.Model, pool, j.cfg)
	if err != nil {
		return err
	}
	jobCtx := trace.ContextWithSpan(context.Background(), span)
	for e := range j.cfg.Epochs {
		for _, seq := range j.seqs {
			if ctx.Err() != nil {
				return errJobCancelled
			}
			if err := s.trainStep(ctx, jobCtx, ex, tr, seq, j, e+1); err != nil {
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
		if err := s.swapAdapter(sctx, j.outputName, "training"); err != nil {
			return fmt.Errorf("the adapter was written but auto_load failed: %w", err)
		}
	}
	return nil
}

// trainStep runs one optimizer step under exclusive ownership and records
// its loss in j.
func (s *Server) trainStep(ctx, jobCtx context.Context, ex exclusiveRunner, tr *train.Trainer, seq train.Sequence, j *trainJob, epoch int) error {
	step := tr.Steps() + 1
	_, span := s.tel.StartTrainingStepSpan(jobCtx,
		attribute.String(telemetry.AttrTrainingJobID, j.id), attribute.Int(telemetry.AttrTrainingStep, step),
		attribute.Int(telemetry.AttrTrainingEpoch, epoch), attribute.Int(telemetry.AttrTrainingTokens, len(seq.IDs)))
	defer span.End()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	var loss float64
	err := ex.Exclusive(sctx, engine.PhaseTraining, func() error {
		start := s.clock.Now()
		op := s.tel.BeginMaintenance(telemetry.LinkKindTrainingStep, "sft", span.SpanContext(), start)
		if s.train.stepHold != nil {
			s.train.stepHold()
		}
		var err error
		loss, err = tr.Step(seq)
		op.End(start, s.clock.Now())
		op.Describe(stepOutcome(err), fmt.Sprintf("job %s step %d, %d tokens, loss %.4g", j.id, step, len(seq.IDs), loss))
		return err
	})
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return fmt.Errorf("step %d: %w", step, err)
	}
	span.SetAttributes(attribute.Float64(telemetry.AttrTrainingLoss, loss))
	q := &s.train
	q.mu.Lock()
	j.step, j.epoch = step, epoch
	j.losses = append(j.losses, loss)
	q.stats.Steps++
	q.mu.Unlock()
	return nil
}

// stepOutcome is the maintenance panel's outcome of one optimizer step.
func stepOutcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
