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

// ControlTextError is RenderPrompt's refusal of a string of the request
// that holds control-token text where the template's spans cannot carry it
// as plain text: any string when the spans are unknown, a key of tool-call
// arguments or tool parameters always.
type ControlTextError struct {
	// Message is the index of the message, -1 for a tool (Options.Tools).
	Message int
	// Param names the string as OpenAI's API does: "messages[1].content",
	// "messages[2].tool_calls[0].function.arguments",
	// "tools[0].function.description".
	Param string
}

func (e *ControlTextError) Error() string {
	return fmt.Sprintf("chat: %s contains control-token text that this chat template cannot carry as plain text", e.Param)
}

// RenderPrompt renders msgs as a prompt for v: opt with BOS and EOS set to
// v's tokens' text, the spans of the request's strings (contents, tool
// calls, tools) located by RenderSpans. The spans are the text v must
// tokenize as plain text (tokenizer.EncodeTemplated), so that a content
// cannot forge the template's markup. When the template transforms
// strings so that the spans cannot be located, spans is nil and a string
// holding control-token text is refused with a *ControlTextError rather
// than guessed at; so is such a key of arguments or parameters, whose
// spans are never located. Inference and training both
// encode conversations through it, so a model is trained on the tokens it
// is served.
func (t *Template) RenderPrompt(msgs []Message, v Vocab, opt Options) (text string, spans []Span, err error) {
	if id := v.BOS(); id >= 0 {
		opt.BOS = v.Token(id)
	}
	if id := v.EOS(); id >= 0 {
		opt.EOS = v.Token(id)
	}
	text, spans, exact, fields, err := t.renderSpans(msgs, opt)
	if err != nil {
		return "", nil, err
	}
	if !exact {
		spans = nil
	}
	for _, f := range fields {
		if (f.key || !exact) && v.ContainsControl(f.text) {
			return "", nil, &ControlTextError{Message: f.message(), Param: f.param()}
		}
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
