package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The loaded adapter's info gauge (docs/maintenance.md section 5).
const (
	// MetricActiveAdapter is kiln_active_adapter{name}: 1, with exactly
	// one series, for the adapter the engine runs with ("base": none).
	// It is the only family an adapter name may label: the request timing
	// families never carry one.
	MetricActiveAdapter = "kiln_active_adapter"
	// LabelAdapterName is its label.
	LabelAdapterName = "name"
)

// SetActiveAdapter sets the one series of kiln_active_adapter to name
// ("base" for the base model). Until the first call the family reports
// nothing (a server without adapters).
func (t *Telemetry) SetActiveAdapter(name string) {
	s := attribute.NewSet(attribute.String(LabelAdapterName, name))
	t.proc.activeAdapter.Store(&s)
}

// registerActiveAdapter creates kiln_active_adapter.
func (p *Processor) registerActiveAdapter(meter metric.Meter) error {
	g, err := meter.Int64ObservableGauge(MetricActiveAdapter,
		metric.WithDescription("1 for the adapter the engine runs with (base: none); exactly one series."))
	if err != nil {
		return fmt.Errorf("telemetry: instrument %s: %w", MetricActiveAdapter, err)
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if s := p.activeAdapter.Load(); s != nil {
			o.ObserveInt64(g, 1, metric.WithAttributeSet(*s))
		}
		return nil
	}, g)
	if err != nil {
		return fmt.Errorf("telemetry: callback %s: %w", MetricActiveAdapter, err)
	}
	return nil
}
