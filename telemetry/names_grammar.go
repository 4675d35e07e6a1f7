package telemetry

import "time"

// The constrained decoding of a request (a JSON response format or a
// tool call held to a grammar): attributes of its chat span, and the
// kiln.grammar_compile span for the compile or the cache lookup that
// found the grammar.
const (
	SpanGrammarCompile = "kiln.grammar_compile"

	AttrGrammarKind      = "kiln.grammar.kind"         // json_object, json_schema, tool_required, tool_named, tool_auto
	AttrGrammarCacheHit  = "kiln.grammar.cache_hit"    // the compiled grammar was in the cache
	AttrGrammarCompileMs = "kiln.grammar.compile_ms"   // compile (or lookup) time
	AttrGrammarMaskMs    = "kiln.grammar.mask_ms"      // total mask time over the request's tokens, inside sampling
	AttrGrammarForced    = "kiln.grammar.forced_close" // the budget forced the document closed
	AttrGrammarTruncated = "kiln.grammar.truncated"    // the output ended with the document incomplete
)

// GrammarInfo is a request's grammar compile.
type GrammarInfo struct {
	Kind       string
	Start, End time.Time
	CacheHit   bool
}
