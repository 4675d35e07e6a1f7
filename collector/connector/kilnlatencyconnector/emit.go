package kilnlatencyconnector

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// ScopeName is the instrumentation scope of the metrics the connector
// emits.
const ScopeName = "github.com/kiln-ai/kiln/collector/connector/kilnlatencyconnector"

// The connector's own families, beside the kiln_* ones it derives.
const (
	MetricDroppedSpans   = "kiln_connector_dropped_spans_total"
	MetricUnretainedGaps = "kiln_connector_unretained_gaps_total"
	LabelDropReason      = "reason"
)

// Families carry their exposition names (telemetry.Metric*): a Prometheus
// exporter that adds unit and _total suffixes finds them already there.

// metrics builds the cumulative families of s, stamped start..now. Like
// the in-process exposition, a histogram (or phase) appears once it has an
// observation, and the counters with closed label sets show every label
// value from the start.
func (s *state) metrics(start, now pcommon.Timestamp) pmetric.Metrics {
	m := pmetric.NewMetrics()
	sm := m.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(ScopeName)
	ms := sm.Metrics()
	e := emitter{ms: ms, bounds: s.bounds, start: start, now: now}

	e.histogram(telemetry.MetricITL, "Request-local inter-token gaps, from the chat spans' retained gaps.", &s.itl, "", "")
	e.histogram(telemetry.MetricTTFT, "Time to first token of each completed request with a token.", &s.ttft, "", "")
	e.histogram(telemetry.MetricDuration, "Whole request duration, receipt to end.", &s.duration, "", "")
	var phases pmetric.Metric
	hasPhases := false
	for ph := range latency.NumPhases {
		if s.phase[ph].n == 0 {
			continue
		}
		if !hasPhases {
			phases, hasPhases = e.newHistogram(telemetry.MetricPhase, "Each non-null phase total of each completed request."), true
		}
		e.histogramPoint(phases, &s.phase[ph], telemetry.LabelPhase, ph.String())
	}
	stalls := e.newSum(telemetry.MetricStalls, "Gaps >= 250 ms (fixed threshold) by stall reason, from kiln.stall spans.", "")
	for r := range latency.NumReasons {
		e.sumPoint(stalls, s.stalls[r], telemetry.LabelReason, r.String())
	}
	requests := e.newSum(telemetry.MetricRequests, "Request outcomes.", "")
	for o := range telemetry.NumOutcomes {
		e.sumPoint(requests, s.requests[o], telemetry.LabelStatus, o.String())
	}
	e.sumPoint(e.newSum(telemetry.MetricTokens, "Tokens emitted.", ""), s.tokens, "", "")
	dropped := e.newSum(MetricDroppedSpans, "Kiln spans not counted: a required attribute missing or malformed.", "")
	for r := range numDropReasons {
		e.sumPoint(dropped, s.dropped[r], LabelDropReason, r.String())
	}
	e.sumPoint(e.newSum(MetricUnretainedGaps, "Gap samples of requests with more gaps than a span retains: not in kiln_token_itl_seconds.", ""), s.unretained, "", "")
	return m
}

type emitter struct {
	ms         pmetric.MetricSlice
	bounds     []float64
	start, now pcommon.Timestamp
}

func (e *emitter) newHistogram(name, desc string) pmetric.Metric {
	m := e.ms.AppendEmpty()
	m.SetName(name)
	m.SetDescription(desc)
	m.SetUnit("s")
	m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	return m
}

// histogram emits h as a one-point family, when it has an observation.
func (e *emitter) histogram(name, desc string, h *histogram, label, value string) {
	if h.n == 0 {
		return
	}
	e.histogramPoint(e.newHistogram(name, desc), h, label, value)
}

func (e *emitter) histogramPoint(m pmetric.Metric, h *histogram, label, value string) {
	dp := m.Histogram().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(e.start)
	dp.SetTimestamp(e.now)
	dp.ExplicitBounds().FromRaw(e.bounds)
	dp.BucketCounts().FromRaw(h.counts)
	dp.SetCount(h.n)
	dp.SetSum(h.sum)
	if label != "" {
		dp.Attributes().PutStr(label, value)
	}
}

func (e *emitter) newSum(name, desc, unit string) pmetric.Metric {
	m := e.ms.AppendEmpty()
	m.SetName(name)
	m.SetDescription(desc)
	m.SetUnit(unit)
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	return m
}

func (e *emitter) sumPoint(m pmetric.Metric, v uint64, label, value string) {
	dp := m.Sum().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(e.start)
	dp.SetTimestamp(e.now)
	dp.SetIntValue(int64(v))
	if label != "" {
		dp.Attributes().PutStr(label, value)
	}
}
