package responses

import (
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// The Responses wire format: the response object and its output items
// (a reasoning item, a message with one output_text part, function_call
// items: object.go), and the typed events of a stream, each
// with its sequence_number: response.created and .in_progress, then per
// item output_item.added, content_part.added, the deltas, their .done
// events and output_item.done, and last response.completed (or
// .incomplete, or .failed). A token's kiln.token_timing event, when
// asked, follows the events its text made.

var _ wire.Wire = (*Wire)(nil)

// Wire is a Responses response's state: one choice. Parse makes it.
type Wire struct {
	call  *responsesCall // what the request added to the internal one
	store *Store         // where keep puts a stored response
	seq   int
	out   wire.Outline
	c     *wire.Choice // the choice, for the sink's events
}

// Per item kind: its type on the wire, its id's prefix and the type of
// its delta events.
var (
	itemTypes    = [...]string{wire.ItemText: "message", wire.ItemReasoning: "reasoning", wire.ItemCall: "function_call"}
	itemPrefixes = [...]string{wire.ItemText: "msg_", wire.ItemReasoning: "rs_", wire.ItemCall: "fc_"}
	itemDeltas   = [...]string{wire.ItemText: "response.output_text.delta", wire.ItemReasoning: "response.reasoning_text.delta",
		wire.ItemCall: "response.function_call_arguments.delta"}
)

// event writes one typed event: fill appends its fields after type and
// sequence_number.
func (w *Wire) event(typ string, fill func([]byte) []byte) {
	w.c.Resp.Out.WriteNamed(typ, func(b []byte) []byte {
		b = append(b, `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","sequence_number":`...)
		b = wire.AppendInt(b, int64(w.seq))
		w.seq++
		return append(fill(b), '}')
	})
}

// Open writes response.created and response.in_progress.
func (w *Wire) Open(c *wire.Choice) {
	w.c = c
	for _, typ := range []string{"response.created", "response.in_progress"} {
		w.event(typ, func(b []byte) []byte {
			b = append(b, `,"response":`...)
			return w.appendResponse(b, c, nil, false)
		})
	}
}

// Piece writes the events the token's piece makes of the output items.
func (w *Wire) Piece(c *wire.Choice, pc *wire.Piece, lp *wire.TokenLogprob) {
	w.c = c
	w.out.Push(pc, lp, w)
}

// Begin implements wire.Sink: output_item.added, and for a message its
// output_text part.
func (w *Wire) Begin(it *wire.Item) {
	it.ID = wire.NewID(itemPrefixes[it.Kind])
	w.event("response.output_item.added", func(b []byte) []byte {
		b = w.appendOutputIndex(b, it)
		b = append(b, `,"item":`...)
		return appendItem(b, w.c, it, "in_progress")
	})
	if it.Kind == wire.ItemText {
		w.event("response.content_part.added", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			return append(b, `,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`...)
		})
	}
}

// Delta implements wire.Sink.
func (w *Wire) Delta(it *wire.Item, text string, lps []wire.TokenLogprob) {
	w.event(itemDeltas[it.Kind], func(b []byte) []byte {
		b = w.appendItemRef(b, it)
		b = append(b, `,"delta":`...)
		b = wire.AppendJSONString(b, text)
		if it.Kind == wire.ItemText {
			b = append(b, `,"logprobs":`...)
			b = appendLogprobArray(b, w.c, lps)
		}
		return b
	})
}

// Finish implements wire.Sink: the item's .done events.
func (w *Wire) Finish(it *wire.Item) {
	c := w.c
	switch it.Kind {
	case wire.ItemText:
		w.event("response.output_text.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"text":`...)
			b = wire.AppendJSONString(b, it.Text.String())
			b = append(b, `,"logprobs":`...)
			return appendLogprobArray(b, c, it.Logprobs)
		})
		w.event("response.content_part.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"part":`...)
			return appendTextPart(b, c, it)
		})
	case wire.ItemReasoning:
		w.event("response.reasoning_text.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"text":`...)
			return wire.AppendJSONString(b, it.Text.String())
		})
	case wire.ItemCall:
		w.event("response.function_call_arguments.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"name":`...)
			b = wire.AppendJSONString(b, it.Name)
			b = append(b, `,"arguments":`...)
			return wire.AppendJSONString(b, it.Text.String())
		})
	}
	w.event("response.output_item.done", func(b []byte) []byte {
		b = w.appendOutputIndex(b, it)
		b = append(b, `,"item":`...)
		return appendItem(b, c, it, "completed")
	})
}

// Timing writes the token's kiln.token_timing event.
func (w *Wire) Timing(c *wire.Choice, ev *latency.TokenEvent) {
	w.c = c
	w.event("kiln.token_timing", func(b []byte) []byte { return wire.AppendTimingField(b, ev) })
}

// Close ends the open item and writes the terminal response event, then
// keeps the response when the request said store.
func (w *Wire) Close(cs []*wire.Choice) {
	c := cs[0]
	w.c = c
	if w.out.Current() == nil && !w.out.Has(wire.ItemText) && !w.out.Has(wire.ItemCall) {
		w.out.Begin(&wire.Item{Kind: wire.ItemText}, w) // an empty answer is still a message
	}
	w.out.End(w)
	w.event("response."+responseStatus(c.FinishReason), func(b []byte) []byte {
		b = append(b, `,"response":`...)
		return w.appendResponse(b, c, w.out.Items, true)
	})
	w.keep(c)
}

// Cut writes the error event of a stream the shutdown grace cut.
func (w *Wire) Cut(c *wire.Choice) {
	w.c = c
	w.event("error", func(b []byte) []byte {
		b = append(b, `,"code":`...)
		b = wire.AppendJSONString(b, wire.ErrCut.Code)
		b = append(b, `,"message":`...)
		b = wire.AppendJSONString(b, wire.ErrCut.Message)
		return append(b, `,"param":null`...)
	})
}

// responseStatus is the response's status for a finish reason: completed,
// incomplete (the output limit) or failed.
func responseStatus(finish string) string {
	switch finish {
	case "stop", "tool_calls":
		return "completed"
	case "length":
		return "incomplete"
	}
	return "failed"
}
