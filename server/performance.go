package server

import (
	"strconv"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// performance is the metadata.performance object of docs/latency-guide.md#asking-for-timing-on-a-request.
type performance struct {
	ok                 bool
	latency            latency.Summary
	promptTokens       int
	completionTokens   int
	ttftMs             latency.NullFloat
	totalLatencyMs     float64
	decodeTokensPerSec latency.NullFloat
	finishReason       string
	adapterUsed        string
	prefix             engine.PrefixUse
	constraint         *constraintUse // nil: no constraint
}

// performance builds the object at the request's end; totalMs is receipt
// to end.
func (x *exchange) performance(finish string, totalMs float64, sum latency.Summary) performance {
	p := performance{
		ok:               true,
		latency:          sum,
		promptTokens:     x.promptLen,
		completionTokens: x.completion,
		ttftMs:           sum.TTFTMs,
		totalLatencyMs:   totalMs,
		finishReason:     finish,
		adapterUsed:      lora.Name(x.req.adapter),
		prefix:           x.prefix,
		constraint:       x.constraintUse(finish),
	}
	// Decode throughput over the gaps: tokens after the first per second
	// between the first and the last token; null without a gap.
	first, last := x.treq.TokenReady()
	if d := last.Sub(first); x.completion > 1 && d > 0 {
		p.decodeTokensPerSec = latency.Float(float64(x.completion-1) / d.Seconds())
	}
	return p
}

// appendMetadata appends `,"metadata":{"performance":...}` when the
// object applies, else nothing.
func (p *performance) appendMetadata(b []byte) []byte {
	if !p.ok {
		return b
	}
	b = append(b, `,"metadata":{"performance":`...)
	b = p.appendJSON(b)
	return append(b, '}')
}

func (p *performance) appendJSON(b []byte) []byte {
	b = append(b, `{"latency":`...)
	b = p.latency.AppendJSON(b)
	b = append(b, `,"prompt_tokens":`...)
	b = appendInt(b, int64(p.promptTokens))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(p.completionTokens))
	b = append(b, `,"ttft_ms":`...)
	b = appendNullFloat(b, p.ttftMs)
	b = append(b, `,"total_latency_ms":`...)
	b = latency.AppendFloat(b, p.totalLatencyMs)
	b = append(b, `,"decode_tokens_per_sec":`...)
	b = appendNullFloat(b, p.decodeTokensPerSec)
	b = append(b, `,"finish_reason":`...)
	b = appendJSONString(b, p.finishReason)
	b = append(b, `,"adapter_used":`...)
	b = appendJSONString(b, p.adapterUsed)
	b = append(b, `,"prefix_cache":`...)
	b = appendPrefixCache(b, p.prefix)
	b = append(b, `,"constraint":`...)
	b = p.constraint.appendJSON(b)
	return append(b, '}')
}

// appendJSON appends the constraint object, or null without one.
func (c *constraintUse) appendJSON(b []byte) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, c.kind)
	b = append(b, `,"compile_ms":`...)
	b = latency.AppendFloat(b, c.compileMs)
	b = append(b, `,"cache_hit":`...)
	b = strconv.AppendBool(b, c.cacheHit)
	b = append(b, `,"mask_ms":`...)
	b = latency.AppendFloat(b, c.maskMs)
	b = append(b, `,"forced_close":`...)
	b = strconv.AppendBool(b, c.forced)
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, c.truncated)
	return append(b, '}')
}

func appendNullFloat(b []byte, f latency.NullFloat) []byte {
	if !f.Valid {
		return append(b, "null"...)
	}
	return latency.AppendFloat(b, f.V)
}
