package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// MetricKVResizes counts KV resizes by reason and direction.
const MetricKVResizes = "kiln_kv_resizes_total"

// Resize reasons: the closed set of kiln_kv_resizes_total's reason (and of
// the kiln.maintenance.reason of kiln.resize spans).
const (
	ResizeReasonMaintenance = "maintenance"
	ResizeReasonAutomatic   = "automatic_memory_policy"
	ResizeReasonTraining    = "training_memory_preparation"
)

// Resize directions: the closed set of kiln_kv_resizes_total's direction
// (the engine's ResizeGrow, ResizeShrink, ResizeNone).
const (
	ResizeGrow   = "grow"
	ResizeShrink = "shrink"
	ResizeNone   = "none"
)

// Label names of kiln_kv_resizes_total.
const (
	LabelResizeReason    = "reason"
	LabelResizeDirection = "direction"
)

var (
	resizeReasons    = [...]string{ResizeReasonMaintenance, ResizeReasonAutomatic, ResizeReasonTraining}
	resizeDirections = [...]string{ResizeGrow, ResizeShrink, ResizeNone}
)

// kvResizeCounter is kiln_kv_resizes_total with one precomputed option set
// per series; every series exists from the start at 0.
type kvResizeCounter struct {
	c    metric.Int64Counter
	opts [len(resizeReasons)][len(resizeDirections)][]metric.AddOption
}

func newKVResizeCounter(meter metric.Meter) (*kvResizeCounter, error) {
	c, err := meter.Int64Counter("kiln_kv_resizes", metric.WithDescription("KV arena resizes by reason and direction."))
	if err != nil {
		return nil, fmt.Errorf("telemetry: instrument %s: %w", MetricKVResizes, err)
	}
	k := &kvResizeCounter{c: c}
	for i, r := range resizeReasons {
		for j, d := range resizeDirections {
			k.opts[i][j] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
				attribute.String(LabelResizeReason, r), attribute.String(LabelResizeDirection, d)))}
			c.Add(context.Background(), 0, k.opts[i][j]...)
		}
	}
	return k, nil
}

// CountKVResize adds one to kiln_kv_resizes_total{reason,direction}. A
// reason or direction outside the closed sets is an error and counts
// nothing.
func (t *Telemetry) CountKVResize(reason, direction string) error {
	if t.proc == nil || t.proc.kvResizes == nil {
		return fmt.Errorf("telemetry: no %s instrument", MetricKVResizes)
	}
	k := t.proc.kvResizes
	for i, r := range resizeReasons {
		if r != reason {
			continue
		}
		for j, d := range resizeDirections {
			if d == direction {
				k.c.Add(context.Background(), 1, k.opts[i][j]...)
				return nil
			}
		}
	}
	return fmt.Errorf("telemetry: kv resize reason %q / direction %q outside the closed sets", reason, direction)
}
