package telemetry

import "go.opentelemetry.io/otel/attribute"

// Grammar records the request's grammar compile: the chat span's
// kiln.grammar.* attributes and a kiln.grammar_compile child span over
// the compile (or the cache lookup that found it).
func (r *Request) Grammar(g GrammarInfo) {
	if r.ended || !r.span.IsRecording() {
		return
	}
	ms := float64(g.End.Sub(g.Start).Microseconds()) / 1000
	attrs := []attribute.KeyValue{
		attribute.String(AttrGrammarKind, g.Kind),
		attribute.Bool(AttrGrammarCacheHit, g.CacheHit),
		attribute.Float64(AttrGrammarCompileMs, ms),
	}
	r.span.SetAttributes(attrs...)
	r.child(SpanGrammarCompile, g.Start, g.End, attrs...)
}

// GrammarEnd records what the grammar cost and did over the request:
// its mask time (inside the sampling phase), whether the budget forced
// the document closed and whether it ended incomplete.
func (r *Request) GrammarEnd(maskMs float64, forced, truncated bool) {
	if r.ended || !r.span.IsRecording() {
		return
	}
	r.span.SetAttributes(
		attribute.Float64(AttrGrammarMaskMs, maskMs),
		attribute.Bool(AttrGrammarForced, forced),
		attribute.Bool(AttrGrammarTruncated, truncated),
	)
}
