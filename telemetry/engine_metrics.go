package telemetry

import (
	"context"
	"fmt"

	"github.com/kiln-ai/kiln/internal/timing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// SetEngineSource sets the function read at each collection for the
// families of the engine's snapshot (engineFamilies: kiln_batching_engine_*,
// the trim's and the prefix cache's; nil: they report nothing).
func (p *Processor) SetEngineSource(f func() timing.EngineSnapshot) {
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
	v                func(*timing.EngineSnapshot) float64
	// attr, when set, is the one label ("key=value") of this series;
	// families sharing a name are one instrument with several series.
	attr attribute.KeyValue
}

// engineFamilies is the only translation of the engine's snapshot into
// metrics. Every timing.EngineSnapshot field feeds a family here or is listed in
// engineUnexported; a test fails when a field is added to the snapshot
// without deciding which. Maintenance families come with the maintenance
// operations that set them (the actor barrier, trim).
var engineFamilies = append([]engineFamily{
	{MetricQueuedRequests, "Requests waiting for admission.", "", false, func(s *timing.EngineSnapshot) float64 { return float64(s.QueueDepth) }, unlabelled},
	{MetricRunningRequests, "Requests admitted and generating.", "", false, func(s *timing.EngineSnapshot) float64 { return float64(s.Active) }, unlabelled},
	{MetricKVUtilization, "KV positions reserved by active requests over the KV budget, from 0 to 1.", "", false, kvUtilization, unlabelled},
	{"kiln_batching_engine_kv_reserved_tokens", "KV positions reserved by active requests.", "", false, func(s *timing.EngineSnapshot) float64 { return float64(s.KVReserved) }, unlabelled},
	{"kiln_batching_engine_kv_budget_tokens", "KV positions admission may reserve (changed by a KV resize).", "", false, func(s *timing.EngineSnapshot) float64 { return float64(s.KVBudget) }, unlabelled},
	{"kiln_batching_engine_recurrent_state_bytes", "Memory of the recurrent states of Gated DeltaNet layers (Qwen3.5): running sequences' and kept ones.", "By", false, func(s *timing.EngineSnapshot) float64 { return float64(s.RecurrentBytes) }, unlabelled},
	{"kiln_batching_engine_prefilling_requests", "Requests with prompt left to prefill.", "", false, func(s *timing.EngineSnapshot) float64 { return float64(s.Prefilling) }, unlabelled},
	{"kiln_batching_engine_batch_size", "Rows in the last batched decode step.", "", false, func(s *timing.EngineSnapshot) float64 { return float64(s.BatchLast) }, unlabelled},
	{"kiln_batching_engine_batch_size_max", "Largest batched decode step so far.", "", false, func(s *timing.EngineSnapshot) float64 { return float64(s.BatchMax) }, unlabelled},
	{"kiln_batching_engine_forward_last", "Duration of the last forward step.", "s", false, func(s *timing.EngineSnapshot) float64 { return s.ForwardLast.Seconds() }, unlabelled},
	{"kiln_batching_engine_forward_max", "Longest forward step so far.", "s", false, func(s *timing.EngineSnapshot) float64 { return s.ForwardMax.Seconds() }, unlabelled},
	{"kiln_batching_engine_admission_last", "Duration of the last admission.", "s", false, func(s *timing.EngineSnapshot) float64 { return s.AdmissionLast.Seconds() }, unlabelled},
	{"kiln_batching_engine_admission_max", "Longest admission so far.", "s", false, func(s *timing.EngineSnapshot) float64 { return s.AdmissionMax.Seconds() }, unlabelled},
	{"kiln_batching_engine_forward", "Time in forward steps.", "s", true, func(s *timing.EngineSnapshot) float64 { return s.ForwardTotal.Seconds() }, unlabelled},
	{"kiln_batching_engine_forward_steps", "Forward steps run.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.Forwards) }, unlabelled},
	{"kiln_batching_engine_admission", "Time in admission work.", "s", true, func(s *timing.EngineSnapshot) float64 { return s.AdmissionTotal.Seconds() }, unlabelled},
	{"kiln_batching_engine_admissions", "Requests admitted.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.Admissions) }, unlabelled},
	{"kiln_batching_engine_cycle_idle", "Cooperative idle time between cycles.", "s", true, func(s *timing.EngineSnapshot) float64 { return s.CycleIdleTotal.Seconds() }, unlabelled},
	{"kiln_batching_engine_delivery_blocked", "Times the actor found a request channel full.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.BlockedEvents) }, unlabelled},
	{"kiln_batching_engine_delivery_blocked_time", "Time blocked on full request channels.", "s", true, func(s *timing.EngineSnapshot) float64 { return s.BlockedTotal.Seconds() }, unlabelled},
	{"kiln_batching_engine_evictions", "Consumers evicted after the delivery grace.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.Evictions) }, unlabelled},
	{"kiln_batching_engine_cancellations", "Requests whose caller went away.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.Cancellations) }, unlabelled},
	{"kiln_batching_engine_tokens_generated", "Tokens the engine generated.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.TokensGenerated) }, unlabelled},
	{"kiln_batching_engine_cycles", "Actor cycles run.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.Cycles) }, unlabelled},
	{"kiln_batching_engine_actor_barrier_resize_active", "1 while a KV resize holds the actor barrier (acceptance through drain to completion).", "", false, func(s *timing.EngineSnapshot) float64 { return b2f(s.BarrierResize) }, unlabelled},
	{"kiln_batching_engine_actor_barrier_adapter_active", "1 while an adapter swap holds the actor barrier (acceptance through drain to completion).", "", false, func(s *timing.EngineSnapshot) float64 { return b2f(s.BarrierAdapter) }, unlabelled},
	{"kiln_batching_engine_actor_barrier_mutations", "Exclusive mutations run at the actor barrier.", "", true, func(s *timing.EngineSnapshot) float64 { return float64(s.Mutations) }, unlabelled},
	{name: "kiln_memory_reclaim_attempts", desc: reclaimAttemptsDesc, counter: true, v: func(s *timing.EngineSnapshot) float64 { return float64(s.ReclaimReclaimed) }, attr: outcomeAttr(ReclaimOutcomeReclaimed)},
	{name: "kiln_memory_reclaim_attempts", desc: reclaimAttemptsDesc, counter: true, v: func(s *timing.EngineSnapshot) float64 { return float64(s.ReclaimZeroYield) }, attr: outcomeAttr(ReclaimOutcomeZeroYield)},
	{name: "kiln_memory_reclaimed_bytes", desc: "Memory returned by trims (backend buffers and Go heap pages).", counter: true, v: func(s *timing.EngineSnapshot) float64 { return float64(s.ReclaimedBytes) }},
	{name: "kiln_memory_reclaim_last_duration", desc: "Duration of the latest trim under exclusive ownership.", unit: "s", v: func(s *timing.EngineSnapshot) float64 { return s.ReclaimLast.Seconds() }},
}, prefixCacheFamilies()...)

// unlabelled is the attr of a family with a single series.
var unlabelled attribute.KeyValue

const reclaimAttemptsDesc = "Trims (memory reclaim), by whether they gave memory back."

func outcomeAttr(v string) attribute.KeyValue { return attribute.String(LabelOutcome, v) }

// kvUtilization is MetricKVUtilization: the reserved KV positions over the
// budget, clamped to [0, 1]; with no budget (an engine not started) 0, or
// 1 should anything be reserved.
func kvUtilization(s *timing.EngineSnapshot) float64 {
	if s.KVBudget <= 0 {
		return b2f(s.KVReserved > 0)
	}
	return min(1, max(0, float64(s.KVReserved)/float64(s.KVBudget)))
}

// b2f is a 0/1 gauge value.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// engineUnexported are the snapshot fields no family reads: /health,
// /v1/stats and /v1/config serve them. A field of a nested struct is
// named by its path (PrefixCache.BlockLen).
var engineUnexported = []string{
	"Ready", "Recurrent", "Draining", "KVSlots", "BatchLimit", "PrefillLast", "LockWaitTotal",
	"Blocked", "Admitted", "Completed", "Errors", "TrimsPending", "MutationsPending",
	"PrefixCache.BlockLen",
}

// registerEngine creates the observable engine families.
func (p *Processor) registerEngine(meter metric.Meter) error {
	obs := make([]metric.Observable, 0, len(engineFamilies))
	gs := make([]metric.Float64ObservableGauge, len(engineFamilies))
	cs := make([]metric.Float64ObservableCounter, len(engineFamilies))
	first := map[string]int{}
	for k, f := range engineFamilies {
		if j, ok := first[f.name]; ok {
			gs[k], cs[k] = gs[j], cs[j]
			continue
		}
		first[f.name] = k
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
	opts := make([]metric.ObserveOption, len(engineFamilies))
	for k, f := range engineFamilies {
		if f.attr.Valid() {
			opts[k] = metric.WithAttributes(f.attr)
		}
	}
	_, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		f := p.engine.Load()
		if f == nil {
			return nil
		}
		s := (*f)()
		for k, f := range engineFamilies {
			var oo []metric.ObserveOption
			if opts[k] != nil {
				oo = opts[k : k+1]
			}
			if f.counter {
				o.ObserveFloat64(cs[k], f.v(&s), oo...)
			} else {
				o.ObserveFloat64(gs[k], f.v(&s), oo...)
			}
		}
		return nil
	}, obs...)
	if err != nil {
		return fmt.Errorf("telemetry: engine callback: %w", err)
	}
	return nil
}
