package chat

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Span is a byte range [Start, End) of a rendered prompt.
type Span struct{ Start, End int }

// Placeholders stand for the request's strings in the second rendering of
// RenderSpans: private-use code points that no template writes, around the
// string's index in the recorder's fields.
const (
	placeholderOpen  = "\uE000"
	placeholderClose = "\uE001"
)

// RenderSpans renders msgs as Render does and also reports where the
// request's strings lie in the result (in order, not overlapping): the
// messages' contents, names and tool_call_ids, their tool calls' ids,
// names and the strings inside their arguments, the tools' names,
// descriptions and the strings inside their parameters. The caller
// tokenizes them as plain text and recognises special tokens only in the
// template's own markup (tokenizer.EncodeTemplated): a user who writes
// "<|im_end|><|im_start|>system", in a message or a tool's result, must not
// forge a role boundary. The keys of arguments and parameters are not
// located (templates look them up and sort them): RenderPrompt refuses
// control-token text there.
//
// It renders a second time with each non-empty string replaced by a
// unique placeholder, then puts the strings back in place of the
// placeholders: when that rebuilds the real rendering byte for byte, the
// placeholders' positions are the strings' spans. A string may come back
// as written, trimmed (templates that trim contents) or JSON-escaped
// (tojson, which writes tools and arguments). ok is false when the
// rebuild does not match, for a template that transforms strings in other
// ways (splits them, changes case, tests their text): the caller must
// then treat the prompt conservatively.
func (t *Template) RenderSpans(msgs []Message, opt Options) (text string, spans []Span, ok bool, err error) {
	text, spans, ok, _, err = t.renderSpans(msgs, opt)
	return text, spans, ok, err
}

// renderSpans is RenderSpans that also returns the request's strings, keys
// among them.
func (t *Template) renderSpans(msgs []Message, opt Options) (text string, spans []Span, ok bool, fields []field, err error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now() // both renderings see the same date
	}
	text, err = t.Render(msgs, opt)
	if err != nil {
		return "", nil, false, nil, err
	}
	r := &recorder{placeholders: true}
	skeleton, err := t.render(msgs, opt, r)
	if err != nil {
		return text, nil, false, r.fields, nil //nolint:nilerr // the template reacts to the placeholders: no spans
	}
	for _, f := range r.fields {
		if f.key && strings.ContainsAny(f.text, placeholderOpen+placeholderClose) {
			return text, nil, false, r.fields, nil // a key that reads as placeholders
		}
	}
	if skeleton == text {
		return text, nil, true, r.fields, nil // no placeholder (or none rendered)
	}
	spans, ok = rebuild(skeleton, r.fields, text)
	return text, spans, ok, r.fields, nil
}

// rebuild puts the strings of fields in place of the placeholders of
// skeleton and reports the strings' spans when the result is want. Each
// placeholder may stand for its string in one of a few forms (variants);
// a search over the placeholders, remembering the (placeholder, position)
// pairs that failed, finds the forms that rebuild want, in time bounded by
// the placeholders times the distinct positions they can start at.
func rebuild(skeleton string, fields []field, want string) ([]Span, bool) {
	var (
		pieces []string // the text around the placeholders: len(idx)+1
		idx    []int
	)
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
		if err != nil || i < 0 || i >= len(fields) || fields[i].key {
			return nil, false
		}
		pieces = append(pieces, rest[:open])
		idx = append(idx, i)
		rest = rest[open+n+len(placeholderClose):]
	}
	pieces = append(pieces, rest)

	forms := make([][]string, len(fields))
	var failed map[[2]int]bool
	var spans []Span
	var walk func(k, pos int) bool
	walk = func(k, pos int) bool {
		if !strings.HasPrefix(want[pos:], pieces[k]) {
			return false
		}
		pos += len(pieces[k])
		if k == len(idx) {
			return pos == len(want)
		}
		if failed[[2]int{k, pos}] {
			return false
		}
		f := idx[k]
		if forms[f] == nil {
			forms[f] = variants(fields[f].text)
		}
		for _, s := range forms[f] {
			if !strings.HasPrefix(want[pos:], s) {
				continue
			}
			n := len(spans)
			if s != "" {
				spans = append(spans, Span{Start: pos, End: pos + len(s)})
			}
			if walk(k+1, pos+len(s)) {
				return true
			}
			spans = spans[:n]
		}
		if failed == nil {
			failed = make(map[[2]int]bool)
		}
		failed[[2]int{k, pos}] = true
		return false
	}
	if !walk(0, 0) {
		return nil, false
	}
	return spans, true
}

// variants are the forms in which templates write a string s, distinct,
// the likeliest first: as written; trimmed of white space (| trim,
// .strip()) or of leading newlines (Qwen3's .lstrip('\n')); escaped as a
// JSON string's inside, as tojson writes it (no HTML escaping) and as
// tojson(indent=n) does (which escapes <, > and &).
func variants(s string) []string {
	out := []string{s}
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	add(strings.TrimSpace(s))
	add(strings.TrimLeft(s, "\n"))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) == nil {
		j := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		add(string(j[1 : len(j)-1]))
	}
	if j, err := json.Marshal(s); err == nil {
		add(string(j[1 : len(j)-1]))
	}
	return out
}
