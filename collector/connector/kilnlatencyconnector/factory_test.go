package kilnlatencyconnector

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "kilnlatency" {
		t.Errorf("type %q, want kilnlatency", f.Type())
	}
	if got := f.TracesToMetricsStability(); got != component.StabilityLevelAlpha {
		t.Errorf("traces to metrics stability %v", got)
	}
	if _, err := f.CreateTracesToTraces(context.Background(), connectortest.NewNopSettings(componentType), f.CreateDefaultConfig(), consumertest.NewNop()); err == nil {
		t.Error("traces to traces was created; the connector only makes metrics")
	}
}

// TestLifecycle: create, start, consume, shut down; the flush loop emits
// while running and once more at shutdown; a second shutdown and a
// shutdown without start are harmless.
func TestLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.FlushInterval = 100 * time.Millisecond
	sink := &consumertest.MetricsSink{}
	ctx := context.Background()
	c, err := f.CreateTracesToMetrics(ctx, connectortest.NewNopSettings(componentType), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if c.Capabilities().MutatesData {
		t.Error("the connector says it mutates the spans it reads")
	}
	if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := c.ConsumeTraces(ctx, ptrace.NewTraces()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for sink.DataPointCount() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no flush within 10 s at a 100 ms interval")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	n := len(sink.AllMetrics())
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(sink.AllMetrics()); got != n {
		t.Errorf("a second shutdown flushed again (%d batches, then %d)", n, got)
	}

	idle, err := f.CreateTracesToMetrics(ctx, connectortest.NewNopSettings(componentType), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := idle.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown without start: %v", err)
	}
}
