package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
)

// newResource describes this process to trace and metric back ends. It
// starts from the SDK's default resource and adds, each overriding the
// ones before: service.name "kiln" and service.version, the SDK's own
// detectors (telemetry.sdk.*, host.name, process.pid,
// process.executable.name and process.runtime.*; not the command line,
// which may carry an access token), then OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME (the SDK's environment detector), then
// cfg.ServiceName when set. A malformed OTEL_RESOURCE_ATTRIBUTES keeps
// what could be read and is reported in the returned warning; only an
// unusable resource is an error.
func newResource(cfg Config) (res *resource.Resource, warning error, err error) {
	base := []attribute.KeyValue{attribute.String("service.name", "kiln")}
	if cfg.ServiceVersion != "" {
		base = append(base, attribute.String("service.version", cfg.ServiceVersion))
	}
	opts := []resource.Option{
		resource.WithAttributes(base...),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithProcessPID(),
		resource.WithProcessExecutableName(),
		resource.WithProcessRuntimeName(),
		resource.WithProcessRuntimeVersion(),
		resource.WithProcessRuntimeDescription(),
		resource.WithFromEnv(),
	}
	if cfg.ServiceName != "" {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", cfg.ServiceName)))
	}
	detected, derr := resource.New(context.Background(), opts...)
	if derr != nil {
		if detected == nil || !errors.Is(derr, resource.ErrPartialResource) {
			return nil, nil, fmt.Errorf("telemetry: resource: %w", derr)
		}
		warning = fmt.Errorf("telemetry: resource attributes partly unreadable (check OTEL_RESOURCE_ATTRIBUTES): %w", derr)
	}
	merged, merr := resource.Merge(resource.Default(), detected)
	if merr != nil {
		// Schema URLs differ: keep the detected resource, which holds
		// everything the default has.
		return detected, errors.Join(warning, fmt.Errorf("telemetry: merging the default resource: %w", merr)), nil
	}
	return merged, warning, nil
}
