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

// registerEngine creates the observable engine families. Names carry no
// unit or _total suffix: the exporter adds them (a "s" unit gives
// _seconds, a counter _total).
func (p *Processor) registerEngine(meter metric.Meter) error {
	type gauge struct {
		name, desc, unit string
		v                func(*EngineStats) float64
	}
	type counter struct {
		name, desc, unit string
		v                func(*EngineStats) float64
	}
	gauges := []gauge{
		{"kiln_batching_engine_queue_depth", "Requests waiting for admission.", "", func(s *EngineStats) float64 { return float64(s.QueueDepth) }},
		{"kiln_batching_engine_active_requests", "Requests admitted and generating.", "", func(s *EngineStats) float64 { return float64(s.Active) }},
		{"kiln_batching_engine_prefilling_requests", "Requests with prompt left to prefill.", "", func(s *EngineStats) float64 { return float64(s.Prefilling) }},
		{"kiln_batching_engine_batch_size", "Rows in the last batched decode step.", "", func(s *EngineStats) float64 { return float64(s.BatchSizeLast) }},
		{"kiln_batching_engine_batch_size_max", "Largest batched decode step so far.", "", func(s *EngineStats) float64 { return float64(s.BatchSizeMax) }},
		{"kiln_batching_engine_forward_last", "Duration of the last forward step.", "s", func(s *EngineStats) float64 { return s.ForwardLast.Seconds() }},
		{"kiln_batching_engine_forward_max", "Longest forward step so far.", "s", func(s *EngineStats) float64 { return s.ForwardMax.Seconds() }},
		{"kiln_batching_engine_admission_last", "Duration of the last admission.", "s", func(s *EngineStats) float64 { return s.AdmissionLast.Seconds() }},
		{"kiln_batching_engine_admission_max", "Longest admission so far.", "s", func(s *EngineStats) float64 { return s.AdmissionMax.Seconds() }},
	}
	counters := []counter{
		{"kiln_batching_engine_forward", "Time in forward steps.", "s", func(s *EngineStats) float64 { return s.ForwardTotal.Seconds() }},
		{"kiln_batching_engine_forward_steps", "Forward steps run.", "", func(s *EngineStats) float64 { return float64(s.ForwardCount) }},
		{"kiln_batching_engine_admission", "Time in admission work.", "s", func(s *EngineStats) float64 { return s.AdmissionTotal.Seconds() }},
		{"kiln_batching_engine_admissions", "Requests admitted.", "", func(s *EngineStats) float64 { return float64(s.AdmissionCount) }},
		{"kiln_batching_engine_cycle_idle", "Cooperative idle time between cycles.", "s", func(s *EngineStats) float64 { return s.CycleIdleTotal.Seconds() }},
		{"kiln_batching_engine_delivery_blocked", "Times the actor found a request channel full.", "", func(s *EngineStats) float64 { return float64(s.DeliveryBlocked) }},
		{"kiln_batching_engine_delivery_blocked_time", "Time blocked on full request channels.", "s", func(s *EngineStats) float64 { return s.DeliveryBlockedTotal.Seconds() }},
		{"kiln_batching_engine_evictions", "Consumers evicted after the delivery grace.", "", func(s *EngineStats) float64 { return float64(s.Evictions) }},
		{"kiln_batching_engine_cancellations", "Requests whose caller went away.", "", func(s *EngineStats) float64 { return float64(s.Cancellations) }},
		{"kiln_batching_engine_tokens_generated", "Tokens the engine generated.", "", func(s *EngineStats) float64 { return float64(s.TokensGenerated) }},
		{"kiln_batching_engine_cycles", "Actor cycles run.", "", func(s *EngineStats) float64 { return float64(s.Cycles) }},
		{"kiln_batching_engine_maintenance_operations", "Maintenance operations (resize, trim, adapter, training) run.", "", func(s *EngineStats) float64 { return float64(s.MaintenanceOps) }},
		{"kiln_batching_engine_maintenance", "Time maintenance held exclusive device ownership.", "s", func(s *EngineStats) float64 { return s.MaintenanceTotal.Seconds() }},
	}
	var obs []metric.Observable
	var gs []metric.Float64ObservableGauge
	var cs []metric.Float64ObservableCounter
	for _, g := range gauges {
		i, err := meter.Float64ObservableGauge(g.name, metric.WithDescription(g.desc), metric.WithUnit(g.unit))
		if err != nil {
			return fmt.Errorf("telemetry: instrument %s: %w", g.name, err)
		}
		gs, obs = append(gs, i), append(obs, i)
	}
	for _, c := range counters {
		i, err := meter.Float64ObservableCounter(c.name, metric.WithDescription(c.desc), metric.WithUnit(c.unit))
		if err != nil {
			return fmt.Errorf("telemetry: instrument %s: %w", c.name, err)
		}
		cs, obs = append(cs, i), append(obs, i)
	}
	_, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		f := p.engine.Load()
		if f == nil {
			return nil
		}
		s := (*f)()
		for k, g := range gauges {
			o.ObserveFloat64(gs[k], g.v(&s))
		}
		for k, c := range counters {
			o.ObserveFloat64(cs[k], c.v(&s))
		}
		return nil
	}, obs...)
	if err != nil {
		return fmt.Errorf("telemetry: engine callback: %w", err)
	}
	return nil
}
