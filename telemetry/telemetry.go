package telemetry

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// Telemetry owns the tracer and meter providers, the Kiln span processor
// and its instruments, the rolling decode window and the logger.
type Telemetry struct {
	log zerolog.Logger
	win *latency.Window
	now func() time.Time
}

// Option configures New.
type Option func(*options)

type options struct{}

// New builds the providers and the Kiln span processor.
func New(cfg Config, opts ...Option) (*Telemetry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Telemetry{win: latency.NewWindow(0), now: time.Now}, nil
}

// MetricsHandler serves /metrics from Kiln's own registry.
func (t *Telemetry) MetricsHandler() http.Handler { return http.NotFoundHandler() }

// TracerProvider is the provider to pass to otelhttp.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return nil }

// DecodeStats is the rolling decode window now (GET /v1/stats/decode).
func (t *Telemetry) DecodeStats() latency.DecodeStats { return t.win.Stats(t.now()) }

// CountRejected counts a request refused before StartRequest.
func (t *Telemetry) CountRejected() {}

// SetEngineSource sets the function the engine families read at
// collection time.
func (t *Telemetry) SetEngineSource(f func() EngineStats) {}

// Logger returns the process logger.
func (t *Telemetry) Logger() zerolog.Logger { return t.log }

// Shutdown flushes and stops the providers; idempotent.
func (t *Telemetry) Shutdown(ctx context.Context) error { return nil }
