package server

import (
	"strings"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// The output of a choice as the Responses and Messages formats see it: a
// sequence of items (Anthropic's content blocks), each text, reasoning or
// one tool call. outline builds it from the token pieces as they stream,
// and a wire's sink writes each item's opening, deltas and end; for a
// response that was not streamed, outlineOf builds it from the whole
// output.

type itemKind uint8

const (
	itemText itemKind = iota
	itemReasoning
	itemCall
)

// outItem is one output item.
type outItem struct {
	kind   itemKind
	id     string          // the wire's id of the item
	text   strings.Builder // the text, the reasoning, or the call's arguments
	callID string
	name   string
	lps    []tokenLogprob // a text item's tokens, when asked
}

// outSink writes an item's events.
type outSink interface {
	begin(it *outItem)
	delta(it *outItem, text string, lps []tokenLogprob)
	finish(it *outItem)
}

// outline is a streamed choice's items so far.
type outline struct {
	items []*outItem
	cur   *outItem         // the item the stream adds to, nil between items
	calls map[int]*outItem // call items by the parser's index
	// held is blank text (and its tokens' log probabilities) before a
	// text item opens: the newline a model writes before a call is no
	// text of its own.
	held    string
	heldLps []tokenLogprob
}

// push adds one token's piece: its reasoning, its text, then its calls.
func (o *outline) push(pc *piece, lp *tokenLogprob, sink outSink) {
	if pc.reasoning != "" {
		if o.cur == nil || o.cur.kind != itemReasoning {
			o.begin(&outItem{kind: itemReasoning}, sink)
		}
		o.cur.text.WriteString(pc.reasoning)
		sink.delta(o.cur, pc.reasoning, nil)
	}
	o.content(pc.content, lp, sink)
	for _, ev := range pc.calls {
		o.call(ev, sink)
	}
}

// content adds text, opening a text item once the text is more than
// blank.
func (o *outline) content(text string, lp *tokenLogprob, sink outSink) {
	var lps []tokenLogprob
	if lp != nil {
		lps = []tokenLogprob{*lp}
	}
	if o.cur == nil || o.cur.kind != itemText {
		o.held += text
		o.heldLps = append(o.heldLps, lps...)
		if strings.TrimSpace(o.held) == "" {
			return
		}
		text, lps = o.held, o.heldLps
		o.begin(&outItem{kind: itemText}, sink)
	}
	it := o.cur
	it.lps = append(it.lps, lps...)
	if text != "" {
		it.text.WriteString(text)
		sink.delta(it, text, lps)
	}
}

// call adds a call's piece: its beginning opens an item, its argument
// fragments are deltas.
func (o *outline) call(ev toolcall.Event, sink outSink) {
	if ev.Kind == toolcall.CallBegin {
		it := &outItem{kind: itemCall, callID: ev.ID, name: ev.Name}
		o.begin(it, sink)
		if o.calls == nil {
			o.calls = map[int]*outItem{}
		}
		o.calls[ev.Index] = it
	}
	if it := o.calls[ev.Index]; it != nil && ev.Text != "" {
		it.text.WriteString(ev.Text)
		sink.delta(it, ev.Text, nil)
	}
}

// begin ends the current item and opens it.
func (o *outline) begin(it *outItem, sink outSink) {
	o.end(sink)
	o.held, o.heldLps = "", nil
	o.items = append(o.items, it)
	o.cur = it
	sink.begin(it)
}

// end ends the current item.
func (o *outline) end(sink outSink) {
	if o.cur != nil {
		it := o.cur
		o.cur = nil
		sink.finish(it)
	}
}

// has reports whether an item of kind was made.
func (o *outline) has(kind itemKind) bool {
	for _, it := range o.items {
		if it.kind == kind {
			return true
		}
	}
	return false
}

// index is the item's position.
func (o *outline) index(it *outItem) int {
	for i, o := range o.items {
		if o == it {
			return i
		}
	}
	return len(o.items)
}

// outlineOf is the whole output of a choice that was not streamed: its
// reasoning, its text (kept when it is more than blank, or when there is
// no call), then its calls.
func outlineOf(c *choice) *outline {
	o := &outline{}
	content, reasoning := c.text.String(), ""
	var calls []toolcall.Call
	if c.agent != nil {
		content, reasoning = c.agent.content.String(), c.agent.reasoning.String()
		calls = c.agent.p.Calls()
	}
	if reasoning != "" {
		it := &outItem{kind: itemReasoning}
		it.text.WriteString(reasoning)
		o.items = append(o.items, it)
	}
	if strings.TrimSpace(content) != "" || len(calls) == 0 {
		it := &outItem{kind: itemText, lps: c.logprobs}
		it.text.WriteString(content)
		o.items = append(o.items, it)
	}
	for _, c := range calls {
		it := &outItem{kind: itemCall, callID: c.ID, name: c.Name}
		it.text.WriteString(c.Arguments)
		o.items = append(o.items, it)
	}
	return o
}
