package wire

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// recorder is a Sink that writes down each event.
type recorder struct{ events []string }

func (r *recorder) Begin(it *Item) { r.events = append(r.events, fmt.Sprintf("begin %d", it.Kind)) }

func (r *recorder) Delta(it *Item, text string, _ []TokenLogprob) {
	r.events = append(r.events, fmt.Sprintf("delta %d %q", it.Kind, text))
}

func (r *recorder) Finish(it *Item) { r.events = append(r.events, fmt.Sprintf("finish %d", it.Kind)) }

// TestOutline: reasoning, then text (the blank text before it held back
// and given to it), then a call, each item ended as the next begins.
func TestOutline(t *testing.T) {
	var o Outline
	r := &recorder{}
	o.Push(&Piece{Reasoning: "think"}, nil, r)
	o.Push(&Piece{Content: "\n"}, nil, r)
	o.Push(&Piece{Content: "Hi"}, nil, r)
	o.Push(&Piece{Calls: []toolcall.Event{{Kind: toolcall.CallBegin, Index: 0, ID: "call_1", Name: "f", Text: "{"}}}, nil, r)
	o.Push(&Piece{Calls: []toolcall.Event{{Kind: toolcall.CallArgs, Index: 0, Text: "}"}}}, nil, r)
	o.End(r)
	want := []string{
		"begin 1", `delta 1 "think"`,
		"finish 1", "begin 0", `delta 0 "\nHi"`,
		"finish 0", "begin 2", `delta 2 "{"`, `delta 2 "}"`,
		"finish 2",
	}
	if d := cmp.Diff(want, r.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if len(o.Items) != 3 || o.Items[2].CallID != "call_1" || o.Items[2].Text.String() != "{}" || o.Index(o.Items[1]) != 1 {
		t.Errorf("items: %+v", o.Items)
	}
	if o.Current() != nil || !o.Has(ItemCall) {
		t.Error("after End: an item is still open, or the call is missing")
	}
}
