package wire

import (
	"strconv"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// Performance is the metadata.performance object of docs/latency-guide.md#asking-for-timing-on-a-request.
type Performance struct {
	OK                 bool
	Latency            latency.Summary
	PromptTokens       int
	CompletionTokens   int
	TTFTMs             latency.NullFloat
	TotalLatencyMs     float64
	DecodeTokensPerSec latency.NullFloat
	FinishReason       string
	AdapterUsed        string
	Prefix             engine.PrefixUse
	Constraint         *ConstraintUse // nil: no constraint
}

// AppendMetadata appends `,"metadata":{"performance":...}` when the
// object applies, else nothing.
func (p *Performance) AppendMetadata(b []byte) []byte {
	if !p.OK {
		return b
	}
	b = append(b, `,"metadata":{"performance":`...)
	b = p.AppendJSON(b)
	return append(b, '}')
}

// AppendJSON appends the performance object.
func (p *Performance) AppendJSON(b []byte) []byte {
	b = append(b, `{"latency":`...)
	b = p.Latency.AppendJSON(b)
	b = append(b, `,"prompt_tokens":`...)
	b = AppendInt(b, int64(p.PromptTokens))
	b = append(b, `,"completion_tokens":`...)
	b = AppendInt(b, int64(p.CompletionTokens))
	b = append(b, `,"ttft_ms":`...)
	b = AppendNullFloat(b, p.TTFTMs)
	b = append(b, `,"total_latency_ms":`...)
	b = latency.AppendFloat(b, p.TotalLatencyMs)
	b = append(b, `,"decode_tokens_per_sec":`...)
	b = AppendNullFloat(b, p.DecodeTokensPerSec)
	b = append(b, `,"finish_reason":`...)
	b = AppendJSONString(b, p.FinishReason)
	b = append(b, `,"adapter_used":`...)
	b = AppendJSONString(b, p.AdapterUsed)
	b = append(b, `,"prefix_cache":`...)
	b = AppendPrefixCache(b, p.Prefix)
	b = append(b, `,"constraint":`...)
	b = p.Constraint.AppendJSON(b)
	return append(b, '}')
}

// ConstraintUse is what metadata.performance.constraint reports.
type ConstraintUse struct {
	Kind      string
	CompileMs float64
	CacheHit  bool
	MaskMs    float64
	Forced    bool
	Truncated bool
}

// AppendJSON appends the constraint object, or null without one.
func (c *ConstraintUse) AppendJSON(b []byte) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = AppendJSONString(b, c.Kind)
	b = append(b, `,"compile_ms":`...)
	b = latency.AppendFloat(b, c.CompileMs)
	b = append(b, `,"cache_hit":`...)
	b = strconv.AppendBool(b, c.CacheHit)
	b = append(b, `,"mask_ms":`...)
	b = latency.AppendFloat(b, c.MaskMs)
	b = append(b, `,"forced_close":`...)
	b = strconv.AppendBool(b, c.Forced)
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, c.Truncated)
	return append(b, '}')
}

// AppendNullFloat appends f, or null when it is not valid.
func AppendNullFloat(b []byte, f latency.NullFloat) []byte {
	if !f.Valid {
		return append(b, "null"...)
	}
	return latency.AppendFloat(b, f.V)
}

// AppendPrefixCache appends the prefix_cache object: cached_tokens,
// prefilled_tokens, source (null exactly when nothing was reused) and
// stop_reason, every key always present.
func AppendPrefixCache(b []byte, u engine.PrefixUse) []byte {
	b = append(b, `{"cached_tokens":`...)
	b = AppendInt(b, int64(u.Cached))
	b = append(b, `,"prefilled_tokens":`...)
	b = AppendInt(b, int64(u.Prefilled))
	b = append(b, `,"source":`...)
	b = AppendNullableString(b, prefixSource(u))
	b = append(b, `,"stop_reason":`...)
	b = AppendJSONString(b, u.Stop.String())
	return append(b, '}')
}

// prefixSource is the source's wire name, "" (null) when nothing was
// reused: a source without reused tokens means nothing.
func prefixSource(u engine.PrefixUse) string {
	if u.Cached == 0 {
		return ""
	}
	return u.Source.String()
}

// AppendTimingField appends `,"timing":` and the token's event: the
// kiln.token_timing event's field in the formats whose events are typed
// objects (Responses, Messages).
func AppendTimingField(b []byte, ev *latency.TokenEvent) []byte {
	b = append(b, `,"timing":`...)
	return ev.AppendJSON(b)
}
