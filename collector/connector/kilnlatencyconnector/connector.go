package kilnlatencyconnector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/kiln-ai/kiln/telemetry"
)

// kilnConnector derives the kiln_* families from the spans it consumes
// and emits them to the next metrics consumer every flush interval.
type kilnConnector struct {
	cfg    Config
	next   consumer.Metrics
	logger *zap.Logger
	start  pcommon.Timestamp

	mu  sync.Mutex // guards st and dec
	st  *state
	dec decoder

	stop chan struct{}
	done chan struct{}
}

var _ connector.Traces = (*kilnConnector)(nil)

// newConnector counts into histograms with the given bucket bounds: the
// factory passes telemetry.Buckets(), the in-process ones; tests pass
// others to prove a wrong connector is caught.
func newConnector(set connector.Settings, cfg *Config, next consumer.Metrics, bounds []float64) *kilnConnector {
	return &kilnConnector{
		cfg:    *cfg,
		next:   next,
		logger: set.Logger,
		st:     newState(bounds),
	}
}

// Capabilities implements consumer.Traces: the spans are only read.
func (c *kilnConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start starts the flush loop.
func (c *kilnConnector) Start(context.Context, component.Host) error {
	c.start = pcommon.NewTimestampFromTime(time.Now())
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go c.loop()
	return nil
}

// Shutdown stops the flush loop and emits the final counts. It is safe
// without Start.
func (c *kilnConnector) Shutdown(ctx context.Context) error {
	if c.stop == nil {
		return nil
	}
	close(c.stop)
	<-c.done
	c.stop = nil
	return c.flush(ctx)
}

func (c *kilnConnector) loop() {
	defer close(c.done)
	t := time.NewTicker(c.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			if err := c.flush(context.Background()); err != nil {
				c.logger.Warn("kilnlatency: emitting metrics failed", zap.Error(err))
			}
		}
	}
}

// flush emits the cumulative families to the next consumer.
func (c *kilnConnector) flush(ctx context.Context) error {
	c.mu.Lock()
	m := c.st.metrics(c.start, pcommon.NewTimestampFromTime(time.Now()))
	c.mu.Unlock()
	if err := c.next.ConsumeMetrics(ctx, m); err != nil {
		return fmt.Errorf("kilnlatency: next consumer: %w", err)
	}
	return nil
}

// ConsumeTraces counts the Kiln spans of td; other spans are left alone.
func (c *kilnConnector) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			if ss.Scope().Name() != telemetry.ScopeName {
				continue
			}
			spans := ss.Spans()
			for k := range spans.Len() {
				c.consumeSpan(spans.At(k))
			}
		}
	}
	return nil
}

// requestPrefixes name the request spans; the first is the one whose
// request families are counted (Processor.OnEnd counts only it).
var requestPrefixes = [...]string{telemetry.SpanChatPrefix, telemetry.OperationTextCompletion + " "}

// consumeSpan counts one span of Kiln's scope. c.mu is held.
func (c *kilnConnector) consumeSpan(s ptrace.Span) {
	name := s.Name()
	if name == telemetry.SpanStall {
		r, why, ok := stall(s.Attributes())
		if !ok {
			c.st.dropped[why]++
			return
		}
		c.st.stalls[r]++
		return
	}
	for i, p := range requestPrefixes {
		if !strings.HasPrefix(name, p) {
			continue
		}
		ch, why, ok := c.dec.chat(s.Attributes())
		if !ok {
			c.st.dropped[why]++
			return
		}
		c.st.addChat(&ch, i == 0)
		return
	}
}
