package chat

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/tokenizer"
)

// Vocab is what RenderPrompt needs of a tokenizer (*tokenizer.Tokenizer
// implements it): its begin- and end-of-sequence tokens, their text, and
// whether a string holds control-token text.
type Vocab interface {
	BOS() int
	EOS() int
	Token(id int) string
	ContainsControl(s string) bool
}

// ControlTextError is RenderPrompt's refusal of a message whose content
// holds control-token text while the template's spans are unknown.
type ControlTextError struct {
	Message int // index of the message
}

func (e *ControlTextError) Error() string {
	return fmt.Sprintf("chat: message %d contains control-token text that this chat template cannot carry as plain text", e.Message)
}

// RenderPrompt renders msgs as a prompt for v: opt with BOS and EOS set to
// v's tokens' text, the contents' spans located by RenderSpans. The spans
// are the text v must tokenize as plain text (tokenizer.EncodeTemplated),
// so that a content cannot forge the template's markup. When the template
// transforms contents so that the spans cannot be located, spans is nil
// and a content holding control-token text is refused with a
// *ControlTextError rather than guessed at. Inference and training both
// encode conversations through it, so a model is trained on the tokens it
// is served.
func (t *Template) RenderPrompt(msgs []Message, v Vocab, opt Options) (text string, spans []Span, err error) {
	if id := v.BOS(); id >= 0 {
		opt.BOS = v.Token(id)
	}
	if id := v.EOS(); id >= 0 {
		opt.EOS = v.Token(id)
	}
	text, spans, exact, err := t.RenderSpans(msgs, opt)
	if err != nil {
		return "", nil, err
	}
	if !exact {
		for i, m := range msgs {
			if v.ContainsControl(m.Content) {
				return "", nil, &ControlTextError{Message: i}
			}
		}
		spans = nil
	}
	return text, spans, nil
}

// EncodePrompt renders msgs with RenderPrompt and tokenizes the result as
// every prompt of a conversation is tokenized, by the server's chat route,
// `kiln generate --chat` and the trainer alike: special tokens recognised
// only in the template's own markup (tokenizer.EncodeTemplated, the
// contents' spans as plain text), and BOS prepended when the tokenizer asks
// for it and the template did not already write it. Errors are
// RenderPrompt's (a *ControlTextError among them).
func (t *Template) EncodePrompt(msgs []Message, tok *tokenizer.Tokenizer, opt Options) ([]int, error) {
	text, spans, err := t.RenderPrompt(msgs, tok, opt)
	if err != nil {
		return nil, err
	}
	return EncodeRendered(text, spans, tok), nil
}

// EncodeRendered tokenizes a rendering of RenderPrompt (text and its
// contents' spans) as EncodePrompt does.
func EncodeRendered(text string, spans []Span, tok *tokenizer.Tokenizer) []int {
	plain := make([]tokenizer.Span, len(spans))
	for i, sp := range spans {
		plain[i] = tokenizer.Span{Start: sp.Start, End: sp.End}
	}
	return tok.WithBOS(tok.EncodeTemplated(text, plain))
}
