package server

import "github.com/kiln-ai/kiln/engine"

// What a request's prompt took from the prefix cache, as the engine
// reported it (engine.Result.Prefix), on the wire: OpenAI's
// usage.prompt_tokens_details.cached_tokens, and the prefix_cache object
// of metadata.performance and the recent-requests records
// (docs/latency-guide.md#prefix-cache). The server reports the engine's
// numbers as they are; it never derives them.

// appendPromptTokensDetails appends OpenAI's
// `,"prompt_tokens_details":{"cached_tokens":N}`, present on every usage
// (0 when nothing was reused).
func appendPromptTokensDetails(b []byte, u engine.PrefixUse) []byte {
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = appendInt(b, int64(u.Cached))
	return append(b, '}')
}

// appendPrefixCache appends the prefix_cache object: cached_tokens,
// prefilled_tokens, source (null exactly when nothing was reused) and
// stop_reason, every key always present.
func appendPrefixCache(b []byte, u engine.PrefixUse) []byte {
	b = append(b, `{"cached_tokens":`...)
	b = appendInt(b, int64(u.Cached))
	b = append(b, `,"prefilled_tokens":`...)
	b = appendInt(b, int64(u.Prefilled))
	b = append(b, `,"source":`...)
	b = appendNullableString(b, prefixSource(u))
	b = append(b, `,"stop_reason":`...)
	b = appendJSONString(b, u.Stop.String())
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

// prefixCacheJSON is /v1/config's prefix_cache: whether the engine caches
// prompt prefixes, and its byte bound (null: only the free KV budget
// bounds it).
func (c Config) prefixCacheJSON() map[string]any {
	var bound any
	if c.Engine.PrefixCacheBytes > 0 {
		bound = c.Engine.PrefixCacheBytes
	}
	return map[string]any{"enabled": !c.Engine.PrefixCacheOff, "max_bytes": bound}
}
