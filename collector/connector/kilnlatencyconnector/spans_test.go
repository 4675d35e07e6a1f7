package kilnlatencyconnector

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spanCollector is a span exporter that keeps what the server's tracer
// exports, as an OTLP exporter would send it.
type spanCollector struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (c *spanCollector) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, s...)
	return nil
}

func (c *spanCollector) Shutdown(context.Context) error { return nil }

// traces converts exported spans to pdata, as the Collector's OTLP
// receiver hands them to the connector: one resource, one scope block per
// span.
func (c *spanCollector) traces() ptrace.Traces {
	c.mu.Lock()
	defer c.mu.Unlock()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	for _, s := range c.spans {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(s.InstrumentationScope().Name)
		sp := ss.Spans().AppendEmpty()
		sp.SetName(s.Name())
		sp.SetTraceID(pcommon.TraceID(s.SpanContext().TraceID()))
		sp.SetSpanID(pcommon.SpanID(s.SpanContext().SpanID()))
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.StartTime()))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.EndTime()))
		for _, kv := range s.Attributes() {
			putAttr(sp.Attributes(), kv)
		}
	}
	return td
}

func putAttr(m pcommon.Map, kv attribute.KeyValue) {
	k := string(kv.Key)
	switch v := kv.Value; v.Type() {
	case attribute.BOOL:
		m.PutBool(k, v.AsBool())
	case attribute.INT64:
		m.PutInt(k, v.AsInt64())
	case attribute.FLOAT64:
		m.PutDouble(k, v.AsFloat64())
	case attribute.STRING:
		m.PutStr(k, v.AsString())
	case attribute.FLOAT64SLICE:
		s := m.PutEmptySlice(k)
		for _, f := range v.AsFloat64Slice() {
			s.AppendEmpty().SetDouble(f)
		}
	case attribute.INT64SLICE:
		s := m.PutEmptySlice(k)
		for _, n := range v.AsInt64Slice() {
			s.AppendEmpty().SetInt(n)
		}
	case attribute.STRINGSLICE:
		s := m.PutEmptySlice(k)
		for _, str := range v.AsStringSlice() {
			s.AppendEmpty().SetStr(str)
		}
	case attribute.BOOLSLICE:
		s := m.PutEmptySlice(k)
		for _, b := range v.AsBoolSlice() {
			s.AppendEmpty().SetBool(b)
		}
	}
}
