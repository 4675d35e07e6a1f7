package telemetry

// The constrained-decoding part of the trace contract: a request whose
// output a grammar holds (a JSON response format, a forced or an auto tool
// call) carries what the grammar cost it before its first token.
const (
	// SpanGrammarCompile is a child of the chat span covering the lookup
	// of the request's grammar in the cache and, on a miss, its
	// compilation.
	SpanGrammarCompile = "kiln.grammar_compile"
	// AttrGrammarKind is the constraint: json_object, json_schema,
	// tool_required, tool_named or tool_auto (a closed set), on the chat
	// span and on SpanGrammarCompile.
	AttrGrammarKind = "kiln.grammar.kind"
	// AttrGrammarCacheHit says whether the compiled grammar came from the
	// cache.
	AttrGrammarCacheHit = "kiln.grammar.cache_hit"
	// AttrGrammarCompileMs is the lookup and compile time.
	AttrGrammarCompileMs = "kiln.grammar.compile_ms"
	// AttrGrammarMaskMs is the time the grammar's token masks took over
	// the request, part of its sampling phase; set on the chat span at its
	// end.
	AttrGrammarMaskMs = "kiln.grammar.mask_ms"
	// AttrChoiceIndex is the choice a chat span serves when the request
	// asked for n > 1 choices (each choice is its own request span).
	AttrChoiceIndex = "kiln.choice.index"
)
