package kilnlatencyconnector

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"

	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// dropReason is why a Kiln span was not counted: the closed `reason` label
// of kiln_connector_dropped_spans_total.
type dropReason uint8

const (
	dropMissing   dropReason = iota // a required attribute is absent
	dropMalformed                   // an attribute has the wrong type or an impossible value
	numDropReasons
)

var dropReasonNames = [numDropReasons]string{"missing_attribute", "malformed_attribute"}

func (r dropReason) String() string { return dropReasonNames[r] }

// attrTypes are the value types of the trace contract's chat and stall
// span attributes (schemas/trace-contract.md); prefixed keys are in
// prefixTypes.
var attrTypes = map[string]pcommon.ValueType{
	telemetry.AttrGenAIOperationName:         pcommon.ValueTypeStr,
	telemetry.AttrGenAIProviderName:          pcommon.ValueTypeStr,
	telemetry.AttrGenAIRequestModel:          pcommon.ValueTypeStr,
	telemetry.AttrErrorType:                  pcommon.ValueTypeStr,
	telemetry.AttrStatus:                     pcommon.ValueTypeStr,
	telemetry.AttrStream:                     pcommon.ValueTypeBool,
	telemetry.AttrGapSamplesTruncated:        pcommon.ValueTypeBool,
	telemetry.AttrGenAIUsageInputTokens:      pcommon.ValueTypeInt,
	telemetry.AttrGenAIUsageOutputTokens:     pcommon.ValueTypeInt,
	telemetry.AttrEmittedTokens:              pcommon.ValueTypeInt,
	telemetry.AttrGapSamples:                 pcommon.ValueTypeInt,
	telemetry.AttrRetainedGapSamples:         pcommon.ValueTypeInt,
	telemetry.AttrStallCount:                 pcommon.ValueTypeInt,
	telemetry.AttrUnexplainedStallCount:      pcommon.ValueTypeInt,
	telemetry.AttrTTFTMs:                     pcommon.ValueTypeDouble,
	telemetry.AttrITLP50Ms:                   pcommon.ValueTypeDouble,
	telemetry.AttrITLP99Ms:                   pcommon.ValueTypeDouble,
	telemetry.AttrITLP999Ms:                  pcommon.ValueTypeDouble,
	telemetry.AttrMaxITLMs:                   pcommon.ValueTypeDouble,
	telemetry.AttrStallThresholdMs:           pcommon.ValueTypeDouble,
	telemetry.AttrDurationMs:                 pcommon.ValueTypeDouble,
	telemetry.AttrGenAIResponseFinishReasons: pcommon.ValueTypeSlice,
	telemetry.AttrGapsMs:                     pcommon.ValueTypeSlice,
	telemetry.AttrGapReasons:                 pcommon.ValueTypeSlice,
	telemetry.AttrStallReason:                pcommon.ValueTypeStr,
	telemetry.AttrStallGapMs:                 pcommon.ValueTypeDouble,
}

var prefixTypes = []struct {
	prefix string
	typ    pcommon.ValueType
}{
	{telemetry.AttrStallReasonPrefix, pcommon.ValueTypeInt},
	{telemetry.AttrPhasePrefix, pcommon.ValueTypeDouble},
}

// chatRequired are the attributes every ended request span has.
var chatRequired = [...]string{
	telemetry.AttrStatus, telemetry.AttrDurationMs, telemetry.AttrEmittedTokens,
	telemetry.AttrGapSamples, telemetry.AttrRetainedGapSamples, telemetry.AttrGapsMs,
}

// expectedType is the contract's type of key; false for a key the
// contract does not know (ignored, as the in-process reader ignores it).
func expectedType(key string) (pcommon.ValueType, bool) {
	if t, ok := attrTypes[key]; ok {
		return t, true
	}
	for _, p := range prefixTypes {
		if strings.HasPrefix(key, p.prefix) {
			return p.typ, true
		}
	}
	return pcommon.ValueTypeEmpty, false
}

// decoder turns a span's pdata attributes into the []attribute.KeyValue
// the shared derivation reads. It reuses its buffer: one decoder per
// goroutine.
type decoder struct {
	kvs []attribute.KeyValue
}

// chat is a decoded request span.
type chat struct {
	obs        telemetry.Observations
	gaps       pcommon.Slice // the retained gaps in ms, checked
	unretained int           // gap samples the span does not carry
}

// chat decodes a request span's attributes: every known key must have the
// contract's type and a possible value, the required keys must be there,
// and the retained gaps must match their count. It does not allocate once
// the buffer has grown.
func (d *decoder) chat(attrs pcommon.Map) (chat, dropReason, bool) {
	d.kvs = d.kvs[:0]
	bad := false
	attrs.Range(func(k string, v pcommon.Value) bool {
		kv, ok := convert(k, v)
		if !ok {
			bad = true
			return false
		}
		if kv.Key != "" {
			d.kvs = append(d.kvs, kv)
		}
		return true
	})
	if bad {
		return chat{}, dropMalformed, false
	}
	for _, k := range chatRequired {
		if _, ok := attrs.Get(k); !ok {
			return chat{}, dropMissing, false
		}
	}
	st, _ := attrs.Get(telemetry.AttrStatus)
	if _, ok := telemetry.ParseOutcome(st.Str()); !ok {
		return chat{}, dropMalformed, false
	}
	c := chat{obs: telemetry.ObservationsFromAttributes(d.kvs)}
	gv, _ := attrs.Get(telemetry.AttrGapsMs)
	c.gaps = gv.Slice()
	s := &c.obs.Summary
	if c.gaps.Len() != s.RetainedGapSamples || s.RetainedGapSamples > s.GapSamples || s.GapSamples > s.EmittedTokens {
		return chat{}, dropMalformed, false
	}
	for i := range c.gaps.Len() {
		g := c.gaps.At(i)
		if g.Type() != pcommon.ValueTypeDouble || !plausibleMs(g.Double()) {
			return chat{}, dropMalformed, false
		}
	}
	c.unretained = s.GapSamples - s.RetainedGapSamples
	return c, 0, true
}

// convert checks one attribute against the contract and returns it as an
// attribute.KeyValue for the shared reader; an empty key for one it does
// not need (unknown keys and arrays, which the reader does not read or
// the connector reads itself), false for a wrong type or impossible
// value.
func convert(k string, v pcommon.Value) (attribute.KeyValue, bool) {
	want, known := expectedType(k)
	if !known {
		return attribute.KeyValue{}, true
	}
	if v.Type() != want {
		return attribute.KeyValue{}, false
	}
	switch want {
	case pcommon.ValueTypeStr:
		return attribute.String(k, v.Str()), true
	case pcommon.ValueTypeBool:
		return attribute.Bool(k, v.Bool()), true
	case pcommon.ValueTypeInt:
		if v.Int() < 0 {
			return attribute.KeyValue{}, false
		}
		return attribute.Int64(k, v.Int()), true
	case pcommon.ValueTypeDouble:
		if math.IsNaN(v.Double()) || math.IsInf(v.Double(), 0) {
			return attribute.KeyValue{}, false
		}
		return attribute.Float64(k, v.Double()), true
	}
	return attribute.KeyValue{}, true
}

// maxMs bounds an exported duration: a century, far beyond any request,
// and small enough that telemetry.GapFromMs cannot overflow.
const maxMs = 100 * 365 * 24 * 3600 * 1e3

// plausibleMs reports whether f is a possible duration in milliseconds.
func plausibleMs(f float64) bool { return f >= 0 && f <= maxMs }

// stall decodes a `kiln.stall` span: its reason, one of the closed set,
// and a gap of at least the fixed threshold.
func stall(attrs pcommon.Map) (latency.Reason, dropReason, bool) {
	rv, okR := attrs.Get(telemetry.AttrStallReason)
	gv, okG := attrs.Get(telemetry.AttrStallGapMs)
	if !okR || !okG {
		return 0, dropMissing, false
	}
	if rv.Type() != pcommon.ValueTypeStr || gv.Type() != pcommon.ValueTypeDouble || !plausibleMs(gv.Double()) {
		return 0, dropMalformed, false
	}
	r, ok := latency.ParseReason(rv.Str())
	if !ok || !telemetry.IsStall(telemetry.GapFromMs(gv.Double())) {
		return 0, dropMalformed, false
	}
	return r, 0, true
}
