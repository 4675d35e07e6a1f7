package server

import (
	"strconv"

	"github.com/kiln-ai/kiln/engine"
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
