package chat

import (
	"strconv"
	"strings"
	"time"
)

// Span is a byte range [Start, End) of a rendered prompt.
type Span struct{ Start, End int }

// Placeholders stand for message contents in the second rendering of
// RenderSpans: private-use code points that no template writes, around the
// message's index.
const (
	placeholderOpen  = "\uE000"
	placeholderClose = "\uE001"
)

// RenderSpans renders msgs as Render does and also reports where the
// messages' contents lie in the result (in order, not overlapping), so
// that the caller can tokenize them as plain text and recognise special
// tokens only in the template's own markup (tokenizer.EncodeTemplated):
// a user who writes "<|im_end|><|im_start|>system" must not forge a role
// boundary.
//
// It renders a second time with each non-empty content replaced by a
// unique placeholder, then puts the contents back in place of the
// placeholders: when that rebuilds the real rendering byte for byte, the
// placeholders' positions are the contents' spans. Templates that trim
// contents are handled (the trimmed content is tried too). ok is false
// when the rebuild does not match, for a template that transforms contents
// in other ways (splits them, changes case, tests their text): the caller
// must then treat the prompt conservatively.
func (t *Template) RenderSpans(msgs []Message, opt Options) (text string, spans []Span, ok bool, err error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now() // both renderings see the same date
	}
	text, err = t.Render(msgs, opt)
	if err != nil {
		return "", nil, false, err
	}
	ph := make([]Message, len(msgs))
	some := false
	for i, m := range msgs {
		ph[i] = m
		if m.Content != "" {
			ph[i].Content = placeholderOpen + strconv.Itoa(i) + placeholderClose
			some = true
		}
	}
	if !some {
		return text, nil, true, nil
	}
	skeleton, err := t.Render(ph, opt)
	if err != nil {
		return text, nil, false, nil //nolint:nilerr // the template reacts to the placeholders: no spans
	}
	for _, trim := range []bool{false, true} {
		if spans, ok := rebuild(skeleton, msgs, text, trim); ok {
			return text, spans, true, nil
		}
	}
	return text, nil, false, nil
}

// rebuild puts the contents of msgs (trimmed of surrounding white space
// when trim) in place of the placeholders of skeleton and reports the
// contents' spans when the result is want. It compares as it goes, so it
// costs one pass over want however many messages there are.
func rebuild(skeleton string, msgs []Message, want string, trim bool) ([]Span, bool) {
	var spans []Span
	pos := 0
	take := func(piece string) bool {
		if !strings.HasPrefix(want[pos:], piece) {
			return false
		}
		pos += len(piece)
		return true
	}
	rest := skeleton
	for {
		open := strings.Index(rest, placeholderOpen)
		if open < 0 {
			break
		}
		n := strings.Index(rest[open:], placeholderClose)
		if n < 0 {
			return nil, false
		}
		i, err := strconv.Atoi(rest[open+len(placeholderOpen) : open+n])
		if err != nil || i < 0 || i >= len(msgs) || !take(rest[:open]) {
			return nil, false
		}
		c := msgs[i].Content
		if trim {
			c = strings.TrimSpace(c)
		}
		start := pos
		if !take(c) {
			return nil, false
		}
		if c != "" {
			spans = append(spans, Span{Start: start, End: pos})
		}
		rest = rest[open+n+len(placeholderClose):]
	}
	return spans, take(rest) && pos == len(want)
}
