package kilnlatencyconnector

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/kiln-ai/kiln/telemetry"
)

// TypeStr is the component type, as written in a Collector configuration.
const TypeStr = "kilnlatency"

var componentType = component.MustNewType(TypeStr)

const defaultFlushInterval = 15 * time.Second

// NewFactory returns the kilnlatency connector's factory (traces to
// metrics).
func NewFactory() connector.Factory {
	return connector.NewFactory(componentType, createDefaultConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, component.StabilityLevelAlpha))
}

func createDefaultConfig() component.Config {
	return &Config{FlushInterval: defaultFlushInterval}
}

func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("kilnlatency: config is %T, want *Config", cfg)
	}
	return newConnector(set, c, next, telemetry.Buckets()), nil
}
