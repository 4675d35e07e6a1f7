package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"
)

// SetEngineSource sets the function read at each collection for the
// kiln_batching_engine_* families (nil: the families report nothing).
func (p *Processor) SetEngineSource(f func() EngineStats) {
	if f == nil {
		p.engine.Store(nil)
		return
	}
	p.engine.Store(&f)
}

// engineFamily is one kiln_batching_engine_* family: an observable gauge,
// or a counter, read from the engine's snapshot at collection. Names carry
// no unit or _total suffix: the exporter adds them (a "s" unit gives
// _seconds, a counter _total).
type engineFamily struct {
	name, desc, unit string
	counter          bool
	v                func(*EngineStats) float64
}

// engineFamilies is the only translation of the engine's snapshot into
// metrics. Every EngineStats field feeds a family here or is listed in
// engineUnexported; a test fails when a field is added to the snapshot
// without deciding which. Maintenance families (resize, trim, adapter,
// training) come with the maintenance operations that set them.
var engineFamilies = []engineFamily{
	{"kiln_batching_engine_queue_depth", "Requests waiting for admission.", "", false, func(s *EngineStats) float64 { return float64(s.QueueDepth) }},
	{"kiln_batching_engine_active_requests", "Requests admitted and generating.", "", false, func(s *EngineStats) float64 { return float64(s.Active) }},
	{"kiln_batching_engine_prefilling_requests", "Requests with prompt left to prefill.", "", false, func(s *EngineStats) float64 { return float64(s.Prefilling) }},
	{"kiln_batching_engine_batch_size", "Rows in the last batched decode step.", "", false, func(s *EngineStats) float64 { return float64(s.BatchLast) }},
	{"kiln_batching_engine_batch_size_max", "Largest batched decode step so far.", "", false, func(s *EngineStats) float64 { return float64(s.BatchMax) }},
	{"kiln_batching_engine_forward_last", "Duration of the last forward step.", "s", false, func(s *EngineStats) float64 { return s.ForwardLast.Seconds() }},
	{"kiln_batching_engine_forward_max", "Longest forward step so far.", "s", false, func(s *EngineStats) float64 { return s.ForwardMax.Seconds() }},
	{"kiln_batching_engine_admission_last", "Duration of the last admission.", "s", false, func(s *EngineStats) float64 { return s.AdmissionLast.Seconds() }},
	{"kiln_batching_engine_admission_max", "Longest admission so far.", "s", false, func(s *EngineStats) float64 { return s.AdmissionMax.Seconds() }},
	{"kiln_batching_engine_forward", "Time in forward steps.", "s", true, func(s *EngineStats) float64 { return s.ForwardTotal.Seconds() }},
	{"kiln_batching_engine_forward_steps", "Forward steps run.", "", true, func(s *EngineStats) float64 { return float64(s.Forwards) }},
	{"kiln_batching_engine_admission", "Time in admission work.", "s", true, func(s *EngineStats) float64 { return s.AdmissionTotal.Seconds() }},
	{"kiln_batching_engine_admissions", "Requests admitted.", "", true, func(s *EngineStats) float64 { return float64(s.Admissions) }},
	{"kiln_batching_engine_cycle_idle", "Cooperative idle time between cycles.", "s", true, func(s *EngineStats) float64 { return s.CycleIdleTotal.Seconds() }},
	{"kiln_batching_engine_delivery_blocked", "Times the actor found a request channel full.", "", true, func(s *EngineStats) float64 { return float64(s.BlockedEvents) }},
	{"kiln_batching_engine_delivery_blocked_time", "Time blocked on full request channels.", "s", true, func(s *EngineStats) float64 { return s.BlockedTotal.Seconds() }},
	{"kiln_batching_engine_evictions", "Consumers evicted after the delivery grace.", "", true, func(s *EngineStats) float64 { return float64(s.Evictions) }},
	{"kiln_batching_engine_cancellations", "Requests whose caller went away.", "", true, func(s *EngineStats) float64 { return float64(s.Cancellations) }},
	{"kiln_batching_engine_tokens_generated", "Tokens the engine generated.", "", true, func(s *EngineStats) float64 { return float64(s.TokensGenerated) }},
	{"kiln_batching_engine_cycles", "Actor cycles run.", "", true, func(s *EngineStats) float64 { return float64(s.Cycles) }},
}

// engineUnexported are the snapshot fields no family reads: /health and
// /v1/stats serve them.
var engineUnexported = []string{
	"Ready", "Draining", "KVReserved", "KVBudget", "PrefillLast", "LockWaitTotal",
	"Blocked", "Admitted", "Completed", "Errors",
}

// registerEngine creates the observable engine families.
func (p *Processor) registerEngine(meter metric.Meter) error {
	obs := make([]metric.Observable, 0, len(engineFamilies))
	gs := make([]metric.Float64ObservableGauge, len(engineFamilies))
	cs := make([]metric.Float64ObservableCounter, len(engineFamilies))
	for k, f := range engineFamilies {
		var (
			i   metric.Observable
			err error
		)
		if f.counter {
			cs[k], err = meter.Float64ObservableCounter(f.name, metric.WithDescription(f.desc), metric.WithUnit(f.unit))
			i = cs[k]
		} else {
			gs[k], err = meter.Float64ObservableGauge(f.name, metric.WithDescription(f.desc), metric.WithUnit(f.unit))
			i = gs[k]
		}
		if err != nil {
			return fmt.Errorf("telemetry: instrument %s: %w", f.name, err)
		}
		obs = append(obs, i)
	}
	_, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		f := p.engine.Load()
		if f == nil {
			return nil
		}
		s := (*f)()
		for k, f := range engineFamilies {
			if f.counter {
				o.ObserveFloat64(cs[k], f.v(&s))
			} else {
				o.ObserveFloat64(gs[k], f.v(&s))
			}
		}
		return nil
	}, obs...)
	if err != nil {
		return fmt.Errorf("telemetry: engine callback: %w", err)
	}
	return nil
}
