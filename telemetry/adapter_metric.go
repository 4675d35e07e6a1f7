package telemetry

import (
	"context"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel/metric"
)

// The running adapter's gauges (docs/maintenance.md section 5). They carry no
// label: an adapter name is never a metric label (docs/latency-guide.md, Prometheus), since
// names are unbounded and chosen by whoever writes the adapter directory.
// The name and the full revision are in /health and /v1/config (the
// "adapter" object) and on the kiln.adapter_swap span.
const (
	// MetricAdapterActive is kiln_adapter_active: 1 while the engine runs
	// with a LoRA adapter, 0 while it runs the base model.
	MetricAdapterActive = "kiln_adapter_active"
	// MetricAdapterRevision is kiln_adapter_revision: the running
	// adapter's revision as a number, AdapterRevisionNumber of its sha256
	// (0 for the base model).
	MetricAdapterRevision = "kiln_adapter_revision"
)

// adapterRevisionHex is how many leading hex digits of a sha256 make the
// revision number: 13 digits are 52 bits, every such integer is exact in a
// float64 (53-bit significand), so the Prometheus sample is the number
// itself and not a rounding of it.
const adapterRevisionHex = 13

// AdapterRevisionNumber is the number kiln_adapter_revision reports for an
// adapter whose weights have the hex sha256 revision: its first 52 bits
// (13 hex digits) as an integer. It depends only on the weights, not on
// the process, so replicas running the same adapter report the same value
// and a restart does not change it (a per-process load counter would do
// both); /health's adapter.revision_number gives it beside the name. It is
// 0 for anything that is not such a hash ("base").
func AdapterRevisionNumber(revision string) int64 {
	if len(revision) < adapterRevisionHex {
		return 0
	}
	n, err := strconv.ParseUint(revision[:adapterRevisionHex], 16, 64)
	if err != nil {
		return 0
	}
	return int64(n)
}

// adapterState is what the two gauges report.
type adapterState struct {
	active   int64 // 1: an adapter, 0: the base model
	revision int64
}

// SetActiveAdapter sets the gauges to the adapter the engine now runs
// with: loaded is false for the base model (revision is then ignored),
// else revision is the adapter's sha256. Until the first call neither
// gauge reports anything (a server without adapters).
func (t *Telemetry) SetActiveAdapter(loaded bool, revision string) {
	s := adapterState{}
	if loaded {
		s = adapterState{active: 1, revision: AdapterRevisionNumber(revision)}
	}
	t.proc.adapter.Store(&s)
}

// registerActiveAdapter creates kiln_adapter_active and
// kiln_adapter_revision, observed together so a scrape never pairs one
// adapter's flag with another's revision.
func (p *Processor) registerActiveAdapter(meter metric.Meter) error {
	active, err := meter.Int64ObservableGauge(MetricAdapterActive,
		metric.WithDescription("1 while the engine runs with a LoRA adapter, 0 without one."))
	if err != nil {
		return fmt.Errorf("telemetry: instrument %s: %w", MetricAdapterActive, err)
	}
	revision, err := meter.Int64ObservableGauge(MetricAdapterRevision,
		metric.WithDescription("The running LoRA adapter's revision: the first 52 bits of its weights' sha256 as an integer (0: none)."))
	if err != nil {
		return fmt.Errorf("telemetry: instrument %s: %w", MetricAdapterRevision, err)
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if s := p.adapter.Load(); s != nil {
			o.ObserveInt64(active, s.active)
			o.ObserveInt64(revision, s.revision)
		}
		return nil
	}, active, revision)
	if err != nil {
		return fmt.Errorf("telemetry: callback %s: %w", MetricAdapterActive, err)
	}
	return nil
}
