package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// Telemetry owns the tracer and meter providers, the Kiln span processor
// with its instruments and rolling window, the Prometheus registry and the
// logger. It starts no goroutine of its own; the OTLP batch processor (when
// enabled) owns one, stopped by Shutdown.
type Telemetry struct {
	log    zerolog.Logger
	now    func() time.Time
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	mp     *sdkmetric.MeterProvider
	reg    *prometheus.Registry
	proc   *Processor
	prop   propagation.TextMapPropagator

	// Request identities for stall links: ids are never 0.
	ids  atomic.Uint64
	reqs *registry
	// maint holds the recent maintenance operations stall spans link to.
	maint *maintRegistry
	// training is the source of the kiln_training_* families (training.go).
	training trainingSource

	shutdownOnce sync.Once
	shutdownErr  error
}

// Option configures New.
type Option func(*options)

type options struct {
	exporters  []sdktrace.SpanExporter
	processors []sdktrace.SpanProcessor
	now        func() time.Time
	logOut     io.Writer
	logConsole bool
	windowCap  int
}

// WithSpanExporter adds an exporter fed synchronously with the sampled
// spans (tests: tracetest.NewInMemoryExporter).
func WithSpanExporter(e sdktrace.SpanExporter) Option {
	return func(o *options) { o.exporters = append(o.exporters, e) }
}

// WithSpanProcessor adds a span processor after the Kiln processor
// (tests: tracetest.NewSpanRecorder sees recorded spans too).
func WithSpanProcessor(p sdktrace.SpanProcessor) Option {
	return func(o *options) { o.processors = append(o.processors, p) }
}

// WithClock sets the clock for request ends and the rolling window.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithLogOutput sends the logger's JSON (or console text) to w instead of
// stderr.
func WithLogOutput(w io.Writer, console bool) Option {
	return func(o *options) { o.logOut, o.logConsole = w, console }
}

// WithWindowCapacity bounds the rolling window (latency.DefaultWindowCapacity
// by default).
func WithWindowCapacity(n int) Option { return func(o *options) { o.windowCap = n } }

// New builds the providers, the Kiln span processor and the Prometheus
// registry; with cfg.OTLPTracesEndpoint set, sampled spans are exported
// over OTLP (HTTP or gRPC) by a batch processor.
func New(cfg Config, opts ...Option) (*Telemetry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t := &Telemetry{now: o.now, log: stderrLogger(), reqs: newRegistry(), maint: newMaintRegistry()}
	if t.now == nil {
		t.now = time.Now
	}
	if o.logOut != nil {
		t.log = NewLogger(o.logOut, o.logConsole)
	}
	res, warning, err := newResource(cfg)
	if err != nil {
		return nil, err
	}
	if warning != nil {
		t.log.Warn().Err(warning).Msg("telemetry resource")
	}
	if t.prop, err = NewPropagator(cfg.Propagators); err != nil {
		return nil, err
	}

	// Metrics: an own registry, no target_info, no scope labels.
	t.reg = prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(t.reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
	}
	if err := registerProcessMetrics(t.reg, cfg.ServiceVersion); err != nil {
		return nil, err
	}
	buckets := sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Scope: instrumentation.Scope{Name: ScopeName}},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: Buckets()}},
	)
	t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res),
		sdkmetric.WithView(buckets), sdkmetric.WithExemplarFilter(exemplar.TraceBasedFilter))
	t.proc, err = NewProcessor(t.mp.Meter(ScopeName), o.windowCap)
	if err != nil {
		return nil, errors.Join(err, t.mp.Shutdown(context.Background()))
	}

	// Traces: the Kiln processor first, then export.
	topts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(recordAll{export: exportSampler(cfg)}),
		sdktrace.WithSpanProcessor(t.proc),
	}
	for _, p := range o.processors {
		topts = append(topts, sdktrace.WithSpanProcessor(p))
	}
	for _, e := range o.exporters {
		topts = append(topts, sdktrace.WithSyncer(e))
	}
	if cfg.OTLPTracesEndpoint != "" && cfg.SDKDisabled {
		t.log.Info().Msg("OTEL_SDK_DISABLED=true: trace export is off; /metrics and performance metadata stay on")
	}
	if cfg.OTLPTracesEndpoint != "" && !cfg.SDKDisabled {
		e, err := otlpExporter(cfg)
		if err != nil {
			return nil, errors.Join(err, t.mp.Shutdown(context.Background()))
		}
		topts = append(topts, sdktrace.WithBatcher(e))
	}
	t.tp = sdktrace.NewTracerProvider(topts...)
	t.tracer = t.tp.Tracer(ScopeName)
	return t, nil
}

// otlpExporter creates the OTLP trace exporter; it connects lazily, so
// New does not block on the collector.
func otlpExporter(cfg Config) (sdktrace.SpanExporter, error) {
	ctx := context.Background()
	var (
		e   sdktrace.SpanExporter
		err error
	)
	if cfg.OTLPProtocol == ProtocolGRPC {
		e, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(cfg.OTLPTracesEndpoint))
	} else {
		e, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.OTLPTracesEndpoint))
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP trace exporter %s: %w", cfg.OTLPTracesEndpoint, err)
	}
	return e, nil
}

// NewRequestID reserves a request identity (never 0) for a request that
// StartRequest will start, for a caller that must name the request before
// it starts (the server hands it to the engine at submission, which comes
// first because a refused submission starts no request). Pass it as
// RequestInfo.ID.
func (t *Telemetry) NewRequestID() uint64 { return t.ids.Add(1) }

// MetricsHandler serves /metrics from Kiln's own registry, in OpenMetrics
// (with exemplars) when the scraper asks for it.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Propagator is the OTEL_PROPAGATORS propagator to pass to otelhttp.
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return t.prop }

// TracerProvider is the provider to pass to otelhttp.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// Processor is the Kiln span processor.
func (t *Telemetry) Processor() *Processor { return t.proc }

// DecodeStats is the rolling decode window now (GET /v1/stats/decode).
func (t *Telemetry) DecodeStats() latency.DecodeStats { return t.proc.window.Stats(t.now()) }

// CountRejected counts a request refused before StartRequest (429, 503,
// a 4xx) as kiln_requests_total{status="rejected"}.
func (t *Telemetry) CountRejected() { t.proc.CountRejected(context.Background()) }

// SetEngineSource sets the function the engine's families
// (kiln_batching_engine_*, the trim's, kiln_prefix_cache_*) read at
// collection time; it must be safe to call from any goroutine.
func (t *Telemetry) SetEngineSource(f func() timing.EngineSnapshot) { t.proc.SetEngineSource(f) }

// Logger returns the process logger.
func (t *Telemetry) Logger() zerolog.Logger { return t.log }

// Shutdown flushes and stops the providers. It is idempotent and honours
// ctx.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	t.shutdownOnce.Do(func() {
		var errs []error
		if err := t.tp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: tracer provider: %w", err))
		}
		if err := t.mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: meter provider: %w", err))
		}
		t.shutdownErr = errors.Join(errs...)
	})
	return t.shutdownErr
}
