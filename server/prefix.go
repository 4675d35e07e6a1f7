package server

// What a request's prompt took from the prefix cache, as the engine
// reported it (engine.Result.Prefix), on the wire: OpenAI's
// usage.prompt_tokens_details.cached_tokens, and the prefix_cache object
// of metadata.performance and the recent-requests records
// (docs/latency-guide.md#prefix-cache). The server reports the engine's
// numbers as they are; it never derives them.

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
