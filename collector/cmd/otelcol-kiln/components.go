package main

import (
	"fmt"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/kiln-ai/kiln/collector/connector/kilnlatencyconnector"
)

// components are the distribution's factories.
func components() (otelcol.Factories, error) {
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return f, fmt.Errorf("otelcol-kiln: receivers: %w", err)
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](batchprocessor.NewFactory()); err != nil {
		return f, fmt.Errorf("otelcol-kiln: processors: %w", err)
	}
	if f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](kilnlatencyconnector.NewFactory()); err != nil {
		return f, fmt.Errorf("otelcol-kiln: connectors: %w", err)
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		prometheusexporter.NewFactory(), otlphttpexporter.NewFactory(), debugexporter.NewFactory()); err != nil {
		return f, fmt.Errorf("otelcol-kiln: exporters: %w", err)
	}
	return f, nil
}
