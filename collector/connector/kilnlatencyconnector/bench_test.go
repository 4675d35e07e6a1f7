package kilnlatencyconnector

import (
	"testing"

	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/kiln-ai/kiln/telemetry"
)

func connectorSettings() connector.Settings { return connectortest.NewNopSettings(componentType) }

// BenchmarkConsumeChatSpan is the connector's cost per `chat {model}`
// span of 256 tokens (255 retained gaps, one of them a stall, with its
// `kiln.stall` span): ns/op and allocs/op are per request.
func BenchmarkConsumeChatSpan(b *testing.B) {
	td := ptrace.NewTraces()
	ss := kilnScope(td)
	chatSpan(ss, 256, 21.5)
	stallSpan(ss, "actor_prefill", 312)
	c := newConnector(connectorSettings(), &Config{FlushInterval: 1}, nil, telemetry.Buckets())
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	}
	if c.st.requests[telemetry.OutcomeOK] == 0 || c.st.dropped != [numDropReasons]uint64{} {
		b.Fatalf("the benchmark span was not counted: %+v", c.st.dropped)
	}
}
