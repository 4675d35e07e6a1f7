package tokenizer

// Span is a byte range [Start, End) of a text.
type Span struct{ Start, End int }

// EncodeTemplated tokenizes a rendered chat template whose message
// contents lie in the spans plain (sorted, not overlapping): special and
// control token strings stand for their tokens only outside those spans,
// so that text a user wrote ("<|im_end|>", "</s>") can never become a
// control token and forge a role boundary. A control token whose text
// overlaps a span is text too. User-defined tokens match everywhere, as in
// Encode. No BOS is added.
//
// The text is segmented exactly as EncodeSpecial segments it (the
// fragments between recognised special tokens are tokenized whole, across
// the span boundaries), so a prompt whose contents hold no special token
// text gets the same ids as EncodeSpecial gives it: only the injected
// markers change, into the ordinary text tokens Encode gives them.
func (t *Tokenizer) EncodeTemplated(text string, plain []Span) []int {
	return t.encode(text, true, plain)
}

// ContainsControl reports whether text holds the text of a special or
// control token that EncodeSpecial would turn into that token (user-defined
// tokens, which every encoding recognises, do not count).
func (t *Tokenizer) ContainsControl(text string) bool {
	for i := 0; i < len(text); i++ {
		for _, sp := range t.specials[text[i]] {
			if !sp.always && len(text)-i >= len(sp.text) && text[i:i+len(sp.text)] == sp.text {
				return true
			}
		}
	}
	return false
}
