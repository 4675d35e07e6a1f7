package server

import (
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// constraintUse is what holding one choice's output to a grammar cost:
// metadata.performance.constraint, and the chat span's kiln.grammar.*
// attributes.
type constraintUse struct {
	kind     string // a closed set: json_object, json_schema, tool_required, tool_named, tool_auto
	start    time.Time
	end      time.Time // the grammar was ready (looked up, or compiled)
	cacheHit bool
	timed    *timedConstraint // the choice's matcher, which keeps the mask time
}

// appendJSON appends the constraint object, or null for a free output.
func (c *constraintUse) appendJSON(b []byte) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, c.kind)
	b = append(b, `,"compile_ms":`...)
	b = appendMs(b, timing.Elapsed(c.start, c.end))
	b = append(b, `,"cache_hit":`...)
	b = appendBool(b, c.cacheHit)
	b = append(b, `,"mask_ms":`...)
	b = appendMs(b, c.timed.masked)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, c.timed.truncated())
	return append(b, '}')
}

func (c *constraintUse) grammarUse() telemetry.GrammarUse {
	return telemetry.GrammarUse{Kind: c.kind, Start: c.start, End: c.end, CacheHit: c.cacheHit}
}

// matcher is a grammar's per-choice state as the engine drives it.
type matcher interface {
	engine.Constraint
	Truncated() bool
}

// timedConstraint wraps a choice's matcher to keep the time its masks
// take. The actor writes it; the handler reads it once the choice's
// token channel is closed, which orders the two.
type timedConstraint struct {
	m      matcher
	clock  engine.Clock
	masked time.Duration
}

func (t *timedConstraint) Mask(logits []float32, remaining int) {
	t0 := t.clock.Now()
	t.m.Mask(logits, remaining)
	t.masked += timing.Elapsed(t0, t.clock.Now())
}

func (t *timedConstraint) Accept(id int) error { return t.m.Accept(id) }

func (t *timedConstraint) truncated() bool { return t.m.Truncated() }

// constraintUse is the choice's constraint, nil when its output is free.
func (x *exchange) constraintUse() *constraintUse { return x.constraint }

func appendMs(b []byte, d time.Duration) []byte { return latency.AppendFloat(b, timing.Ms(d)) }
