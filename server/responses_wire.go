package server

import (
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// The Responses wire format: the response object and its output items
// (a reasoning item, a message with one output_text part, function_call
// items: responses_object.go), and the typed events of a stream, each
// with its sequence_number: response.created and .in_progress, then per
// item output_item.added, content_part.added, the deltas, their .done
// events and output_item.done, and last response.completed (or
// .incomplete, or .failed). A token's kiln.token_timing event, when
// asked, follows the events its text made.

// responsesWire is a Responses response's state: one choice.
type responsesWire struct {
	call  *responsesCall // what the request added to the internal one
	store *responseStore // where keep puts a stored response
	seq   int
	out   outline
	c     *choice // the choice, for the sink's events
}

// Per item kind: its type on the wire, its id's prefix and the type of
// its delta events.
var (
	itemTypes    = [...]string{itemText: "message", itemReasoning: "reasoning", itemCall: "function_call"}
	itemPrefixes = [...]string{itemText: "msg_", itemReasoning: "rs_", itemCall: "fc_"}
	itemDeltas   = [...]string{itemText: "response.output_text.delta", itemReasoning: "response.reasoning_text.delta",
		itemCall: "response.function_call_arguments.delta"}
)

// event writes one typed event: fill appends its fields after type and
// sequence_number.
func (w *responsesWire) event(typ string, fill func([]byte) []byte) {
	w.c.resp.out.writeNamed(typ, func(b []byte) []byte {
		b = append(b, `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","sequence_number":`...)
		b = appendInt(b, int64(w.seq))
		w.seq++
		return append(fill(b), '}')
	})
}

func (w *responsesWire) open(c *choice) {
	w.c = c
	for _, typ := range []string{"response.created", "response.in_progress"} {
		w.event(typ, func(b []byte) []byte {
			b = append(b, `,"response":`...)
			return w.appendResponse(b, c, nil, false)
		})
	}
}

func (w *responsesWire) piece(c *choice, pc *piece, lp *tokenLogprob) {
	w.c = c
	w.out.push(pc, lp, w)
}

// begin implements outSink: output_item.added, and for a message its
// output_text part.
func (w *responsesWire) begin(it *outItem) {
	it.id = newID(itemPrefixes[it.kind])
	w.event("response.output_item.added", func(b []byte) []byte {
		b = w.appendOutputIndex(b, it)
		b = append(b, `,"item":`...)
		return w.c.appendItem(b, it, "in_progress")
	})
	if it.kind == itemText {
		w.event("response.content_part.added", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			return append(b, `,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`...)
		})
	}
}

// delta implements outSink.
func (w *responsesWire) delta(it *outItem, text string, lps []tokenLogprob) {
	w.event(itemDeltas[it.kind], func(b []byte) []byte {
		b = w.appendItemRef(b, it)
		b = append(b, `,"delta":`...)
		b = appendJSONString(b, text)
		if it.kind == itemText {
			b = append(b, `,"logprobs":`...)
			b = w.c.appendLogprobArray(b, lps)
		}
		return b
	})
}

// finish implements outSink: the item's .done events.
func (w *responsesWire) finish(it *outItem) {
	c := w.c
	switch it.kind {
	case itemText:
		w.event("response.output_text.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"text":`...)
			b = appendJSONString(b, it.text.String())
			b = append(b, `,"logprobs":`...)
			return c.appendLogprobArray(b, it.lps)
		})
		w.event("response.content_part.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"part":`...)
			return c.appendTextPart(b, it)
		})
	case itemReasoning:
		w.event("response.reasoning_text.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"text":`...)
			return appendJSONString(b, it.text.String())
		})
	case itemCall:
		w.event("response.function_call_arguments.done", func(b []byte) []byte {
			b = w.appendItemRef(b, it)
			b = append(b, `,"name":`...)
			b = appendJSONString(b, it.name)
			b = append(b, `,"arguments":`...)
			return appendJSONString(b, it.text.String())
		})
	}
	w.event("response.output_item.done", func(b []byte) []byte {
		b = w.appendOutputIndex(b, it)
		b = append(b, `,"item":`...)
		return c.appendItem(b, it, "completed")
	})
}

func (w *responsesWire) timing(c *choice, ev *latency.TokenEvent) {
	w.c = c
	w.event("kiln.token_timing", func(b []byte) []byte {
		b = append(b, `,"timing":`...)
		return ev.AppendJSON(b)
	})
}

func (w *responsesWire) close(cs []*choice) {
	c := cs[0]
	w.c = c
	if w.out.cur == nil && !w.out.has(itemText) && !w.out.has(itemCall) {
		w.out.begin(&outItem{kind: itemText}, w) // an empty answer is still a message
	}
	w.out.end(w)
	w.event("response."+responseStatus(c.finishReason), func(b []byte) []byte {
		b = append(b, `,"response":`...)
		return w.appendResponse(b, c, w.out.items, true)
	})
	w.keep(c)
}

func (w *responsesWire) cut(c *choice) {
	w.c = c
	w.event("error", func(b []byte) []byte {
		b = append(b, `,"code":`...)
		b = appendJSONString(b, errCut.Code)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, errCut.Message)
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
