package telemetry

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL values).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config is the telemetry configuration, parsed once in cmd (flags and the
// standard OTEL_* variables, see ConfigFromEnv) and passed to New.
type Config struct {
	ServiceName    string // resource service.name; "kiln" when empty
	ServiceVersion string // resource service.version; optional

	// OTLPTracesEndpoint is the full URL traces are exported to; empty
	// turns OTLP export off.
	OTLPTracesEndpoint string
	// OTLPProtocol is ProtocolHTTP (default) or ProtocolGRPC.
	OTLPProtocol string

	// Sampler is the OTEL_TRACES_SAMPLER name deciding which traces are
	// exported (default parentbased_always_on); every request is recorded
	// for metrics whatever it says. SamplerArg is the ratio of the
	// traceidratio samplers (default 1).
	Sampler    string
	SamplerArg float64

	// Propagators is the OTEL_PROPAGATORS list (NewPropagator); empty
	// means tracecontext,baggage.
	Propagators string
	// SDKDisabled (OTEL_SDK_DISABLED=true) turns trace export off: no span
	// leaves the process whatever the OTLP variables say. Kiln's own
	// accounting (/metrics, performance metadata, the dashboard) is not
	// OpenTelemetry export and stays on.
	SDKDisabled bool
}

// Sampler names (OTEL_TRACES_SAMPLER).
const (
	SamplerAlwaysOn               = "always_on"
	SamplerAlwaysOff              = "always_off"
	SamplerTraceIDRatio           = "traceidratio"
	SamplerParentBasedAlwaysOn    = "parentbased_always_on"
	SamplerParentBasedAlwaysOff   = "parentbased_always_off"
	SamplerParentBasedTraceIDRate = "parentbased_traceidratio"
)

// ErrInvalidConfig is wrapped by every Validate error.
var ErrInvalidConfig = errors.New("telemetry: invalid config")

// Validate reports the first invalid field, naming its key.
func (c Config) Validate() error {
	switch c.OTLPProtocol {
	case "", ProtocolHTTP, ProtocolGRPC:
	default:
		return fmt.Errorf("%w: OTEL_EXPORTER_OTLP_PROTOCOL %q: want %q or %q", ErrInvalidConfig, c.OTLPProtocol, ProtocolHTTP, ProtocolGRPC)
	}
	switch c.Sampler {
	case "", SamplerAlwaysOn, SamplerAlwaysOff, SamplerTraceIDRatio, SamplerParentBasedAlwaysOn,
		SamplerParentBasedAlwaysOff, SamplerParentBasedTraceIDRate:
	default:
		return fmt.Errorf("%w: OTEL_TRACES_SAMPLER %q is not supported", ErrInvalidConfig, c.Sampler)
	}
	if !(c.SamplerArg >= 0 && c.SamplerArg <= 1) { // NaN too
		return fmt.Errorf("%w: OTEL_TRACES_SAMPLER_ARG %v: want a ratio in [0, 1]", ErrInvalidConfig, c.SamplerArg)
	}
	if _, err := NewPropagator(c.Propagators); err != nil {
		return err
	}
	return nil
}

// ConfigFromEnv reads the standard OpenTelemetry variables through getenv
// (os.Getenv in cmd): OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the traces one wins and is used as
// is; the generic one is a base URL to which HTTP appends /v1/traces),
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG, OTEL_PROPAGATORS and OTEL_SDK_DISABLED. Other
// OTLP variables (headers, timeout, TLS) are read by the exporter itself,
// and OTEL_RESOURCE_ATTRIBUTES by the SDK's resource detector (New).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{ServiceName: getenv("OTEL_SERVICE_NAME"), SamplerArg: 1}
	c.OTLPProtocol = getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if c.OTLPProtocol == "" {
		c.OTLPProtocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if c.OTLPProtocol == "" {
		c.OTLPProtocol = ProtocolHTTP
	}
	if ep := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); ep != "" {
		c.OTLPTracesEndpoint = ep
	} else if ep := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); ep != "" {
		if c.OTLPProtocol == ProtocolHTTP {
			ep = strings.TrimSuffix(ep, "/") + "/v1/traces"
		}
		c.OTLPTracesEndpoint = ep
	}
	c.Propagators = getenv("OTEL_PROPAGATORS")
	if v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); v != "" {
		off, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("%w: OTEL_SDK_DISABLED %q: want true or false", ErrInvalidConfig, v)
		}
		c.SDKDisabled = off
	}
	c.Sampler = getenv("OTEL_TRACES_SAMPLER")
	if arg := getenv("OTEL_TRACES_SAMPLER_ARG"); arg != "" {
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			return c, fmt.Errorf("%w: OTEL_TRACES_SAMPLER_ARG %q: %w", ErrInvalidConfig, arg, err)
		}
		c.SamplerArg = v
	}
	return c, c.Validate()
}
