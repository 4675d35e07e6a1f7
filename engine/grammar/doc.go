// Package grammar constrains a model's output to a language: a JSON
// document that fits a JSON Schema, a tool call in a model family's
// syntax, or free text until a trigger and a constrained part after it
// (a lazy grammar).
//
// The pipeline, a file each:
//
//   - expr.go: the expressions a grammar is written in (literals, byte
//     classes, sequences, alternatives, bounded repetition).
//   - json.go, schema*.go: JSON values and JSON Schema as expressions
//     (schema.go the entry points, the others one concern each).
//   - nfa.go: an expression compiled to a byte automaton, under Limits,
//     with each state's shortest distance to the end of the document.
//   - dfa.go: the automaton determinised lazily, a state at a time.
//   - vocab.go: the tokenizer's vocabulary as a trie of byte strings.
//   - mask.go: the tokens a state allows, found by walking the trie,
//     cached per state.
//   - matcher.go: one request's position in a grammar: Mask before each
//     token, Accept after; it closes the document before the budget ends.
//   - cache.go: compiled grammars kept by key (schema and tokenizer).
//
// A compiled Grammar is shared by every request that uses it and is safe
// for concurrent use; a Matcher belongs to one request.
package grammar
