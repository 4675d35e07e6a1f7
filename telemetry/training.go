package telemetry

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// TrainingStats are the counts behind the kiln_training_* families.
type TrainingStats struct {
	Completed, Failed, Cancelled uint64
	Steps                        uint64
	Active                       bool
}

// trainingSource holds the function the kiln_training_* families read;
// their instruments are registered once per Telemetry.
type trainingSource struct {
	once sync.Once
	err  error
	f    atomic.Pointer[func() TrainingStats]
}

// SetTrainingSource makes the kiln_training_jobs_total{type="sft",
// status}, kiln_training_active and kiln_training_steps_total families
// read f at each collection (the server sets it at construction; the latest
// call wins). The families are registered on the first call.
func (t *Telemetry) SetTrainingSource(f func() TrainingStats) error {
	t.training.f.Store(&f)
	t.training.once.Do(func() { t.training.err = t.registerTraining() })
	return t.training.err
}

func (t *Telemetry) registerTraining() error {
	meter := t.mp.Meter(ScopeName)
	jobs, err := meter.Int64ObservableCounter("kiln_training_jobs", metric.WithDescription("Training jobs ended, by type and status."))
	if err != nil {
		return fmt.Errorf("telemetry: instrument kiln_training_jobs: %w", err)
	}
	active, err := meter.Int64ObservableGauge("kiln_training_active", metric.WithDescription("1 while a training job runs."))
	if err != nil {
		return fmt.Errorf("telemetry: instrument kiln_training_active: %w", err)
	}
	steps, err := meter.Int64ObservableCounter("kiln_training_steps", metric.WithDescription("Optimizer steps run by training jobs."))
	if err != nil {
		return fmt.Errorf("telemetry: instrument kiln_training_steps: %w", err)
	}
	status := func(s string) metric.ObserveOption {
		return metric.WithAttributes(attribute.String(LabelType, "sft"), attribute.String(LabelStatus, s))
	}
	byStatus := []metric.ObserveOption{status(TrainingCompleted), status(TrainingFailed), status(TrainingCancelled)}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		f := t.training.f.Load()
		if f == nil {
			return nil
		}
		s := (*f)()
		o.ObserveInt64(jobs, int64(s.Completed), byStatus[0])
		o.ObserveInt64(jobs, int64(s.Failed), byStatus[1])
		o.ObserveInt64(jobs, int64(s.Cancelled), byStatus[2])
		var a int64
		if s.Active {
			a = 1
		}
		o.ObserveInt64(active, a)
		o.ObserveInt64(steps, int64(s.Steps))
		return nil
	}, jobs, active, steps)
	if err != nil {
		return fmt.Errorf("telemetry: training callback: %w", err)
	}
	return nil
}
