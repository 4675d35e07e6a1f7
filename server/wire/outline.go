package wire

import (
	"strings"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// The output of a choice as the Responses and Messages formats see it: a
// sequence of items (Anthropic's content blocks), each text, reasoning or
// one tool call. Outline builds it from the token pieces as they stream,
// and a wire's sink writes each item's opening, deltas and end; for a
// response that was not streamed, OutlineOf builds it from the whole
// output.

// ItemKind is what an output item holds.
type ItemKind uint8

const (
	ItemText ItemKind = iota
	ItemReasoning
	ItemCall
)

// Item is one output item.
type Item struct {
	Kind     ItemKind
	ID       string          // the wire's id of the item
	Text     strings.Builder // the text, the reasoning, or the call's arguments
	CallID   string
	Name     string
	Logprobs []TokenLogprob // a text item's tokens, when asked
}

// Sink writes an item's events.
type Sink interface {
	Begin(it *Item)
	Delta(it *Item, text string, lps []TokenLogprob)
	Finish(it *Item)
}

// Outline is a streamed choice's items so far.
type Outline struct {
	Items []*Item
	cur   *Item         // the item the stream adds to, nil between items
	calls map[int]*Item // call items by the parser's index
	// held is blank text (and its tokens' log probabilities) before a
	// text item opens: the newline a model writes before a call is no
	// text of its own.
	held    string
	heldLps []TokenLogprob
}

// Push adds one token's piece: its reasoning, its text, then its calls.
func (o *Outline) Push(pc *Piece, lp *TokenLogprob, sink Sink) {
	if pc.Reasoning != "" {
		if o.cur == nil || o.cur.Kind != ItemReasoning {
			o.Begin(&Item{Kind: ItemReasoning}, sink)
		}
		o.cur.Text.WriteString(pc.Reasoning)
		sink.Delta(o.cur, pc.Reasoning, nil)
	}
	o.content(pc.Content, lp, sink)
	for _, ev := range pc.Calls {
		o.call(ev, sink)
	}
}

// content adds text, opening a text item once the text is more than
// blank.
func (o *Outline) content(text string, lp *TokenLogprob, sink Sink) {
	var lps []TokenLogprob
	if lp != nil {
		lps = []TokenLogprob{*lp}
	}
	if o.cur == nil || o.cur.Kind != ItemText {
		o.held += text
		o.heldLps = append(o.heldLps, lps...)
		if strings.TrimSpace(o.held) == "" {
			return
		}
		text, lps = o.held, o.heldLps
		o.Begin(&Item{Kind: ItemText}, sink)
	}
	it := o.cur
	it.Logprobs = append(it.Logprobs, lps...)
	if text != "" {
		it.Text.WriteString(text)
		sink.Delta(it, text, lps)
	}
}

// call adds a call's piece: its beginning opens an item, its argument
// fragments are deltas.
func (o *Outline) call(ev toolcall.Event, sink Sink) {
	if ev.Kind == toolcall.CallBegin {
		it := &Item{Kind: ItemCall, CallID: ev.ID, Name: ev.Name}
		o.Begin(it, sink)
		if o.calls == nil {
			o.calls = map[int]*Item{}
		}
		o.calls[ev.Index] = it
	}
	if it := o.calls[ev.Index]; it != nil && ev.Text != "" {
		it.Text.WriteString(ev.Text)
		sink.Delta(it, ev.Text, nil)
	}
}

// Begin ends the current item and opens it.
func (o *Outline) Begin(it *Item, sink Sink) {
	o.End(sink)
	o.held, o.heldLps = "", nil
	o.Items = append(o.Items, it)
	o.cur = it
	sink.Begin(it)
}

// End ends the current item.
func (o *Outline) End(sink Sink) {
	if o.cur != nil {
		it := o.cur
		o.cur = nil
		sink.Finish(it)
	}
}

// Current is the item the stream adds to, nil between items.
func (o *Outline) Current() *Item { return o.cur }

// Has reports whether an item of kind was made.
func (o *Outline) Has(kind ItemKind) bool {
	for _, it := range o.Items {
		if it.Kind == kind {
			return true
		}
	}
	return false
}

// Index is the item's position.
func (o *Outline) Index(it *Item) int {
	for i, o := range o.Items {
		if o == it {
			return i
		}
	}
	return len(o.Items)
}

// OutlineOf is the whole output of a choice that was not streamed: its
// reasoning, its text (kept when it is more than blank, or when there is
// no call), then its calls.
func OutlineOf(c *Choice) *Outline {
	o := &Outline{}
	content, reasoning := c.Text.String(), ""
	var calls []toolcall.Call
	if c.Agent != nil {
		content, reasoning = c.Agent.Content.String(), c.Agent.Reasoning.String()
		calls = c.Agent.Parser.Calls()
	}
	if reasoning != "" {
		it := &Item{Kind: ItemReasoning}
		it.Text.WriteString(reasoning)
		o.Items = append(o.Items, it)
	}
	if strings.TrimSpace(content) != "" || len(calls) == 0 {
		it := &Item{Kind: ItemText, Logprobs: c.Logprobs}
		it.Text.WriteString(content)
		o.Items = append(o.Items, it)
	}
	for _, c := range calls {
		it := &Item{Kind: ItemCall, CallID: c.ID, Name: c.Name}
		it.Text.WriteString(c.Arguments)
		o.Items = append(o.Items, it)
	}
	return o
}
