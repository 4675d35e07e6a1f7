package server

import (
	"encoding/json"
	"net/http"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// The Anthropic Messages wire format: the message object with its content
// blocks (thinking, text, tool_use), and the named events of a stream:
// message_start and a ping, then per block content_block_start, its
// deltas (text_delta, thinking_delta, input_json_delta) and
// content_block_stop, then message_delta (stop_reason and the final
// usage) and message_stop, which carries metadata.performance when it
// applies. A token's kiln.token_timing event, when asked, follows the
// events its text made. A generation that fails mid-stream ends with an
// error event.
//
// usage.input_tokens counts, as Anthropic's does, the prompt tokens the
// prefix cache did not give; cache_read_input_tokens the ones it gave.
// message_start cannot know them yet (the prompt is still being
// prefilled): it says the whole prompt, and message_delta the split.

type messagesWire struct {
	out outline
	c   *choice
}

// event writes one named event whose data is {"type":name, ...fill}.
func (w *messagesWire) event(name string, fill func([]byte) []byte) {
	w.c.resp.out.writeNamed(name, func(b []byte) []byte {
		b = append(b, `{"type":"`...)
		b = append(b, name...)
		b = append(b, '"')
		if fill != nil {
			b = fill(b)
		}
		return append(b, '}')
	})
}

func (w *messagesWire) open(c *choice) {
	w.c = c
	w.event("message_start", func(b []byte) []byte {
		b = append(b, `,"message":`...)
		return w.appendMessage(b, c, nil, false)
	})
	w.event("ping", nil)
}

func (w *messagesWire) piece(c *choice, pc *piece, lp *tokenLogprob) {
	w.c = c
	w.out.push(pc, lp, w)
}

// begin implements outSink: content_block_start.
func (w *messagesWire) begin(it *outItem) {
	w.event("content_block_start", func(b []byte) []byte {
		b = w.appendIndex(b, it)
		b = append(b, `,"content_block":`...)
		return appendBlock(b, it, false)
	})
}

// delta implements outSink: content_block_delta.
func (w *messagesWire) delta(it *outItem, text string, _ []tokenLogprob) {
	w.event("content_block_delta", func(b []byte) []byte {
		b = w.appendIndex(b, it)
		switch it.kind {
		case itemText:
			b = append(b, `,"delta":{"type":"text_delta","text":`...)
		case itemReasoning:
			b = append(b, `,"delta":{"type":"thinking_delta","thinking":`...)
		default:
			b = append(b, `,"delta":{"type":"input_json_delta","partial_json":`...)
		}
		b = appendJSONString(b, text)
		return append(b, '}')
	})
}

// finish implements outSink: content_block_stop.
func (w *messagesWire) finish(it *outItem) {
	w.event("content_block_stop", func(b []byte) []byte { return w.appendIndex(b, it) })
}

func (w *messagesWire) appendIndex(b []byte, it *outItem) []byte {
	b = append(b, `,"index":`...)
	return appendInt(b, int64(w.out.index(it)))
}

func (w *messagesWire) timing(c *choice, ev *latency.TokenEvent) {
	w.c = c
	w.event("kiln.token_timing", func(b []byte) []byte {
		b = append(b, `,"timing":`...)
		return ev.AppendJSON(b)
	})
}

func (w *messagesWire) close(cs []*choice) {
	c := cs[0]
	w.c = c
	w.out.end(w)
	reason, seq := stopReason(c)
	if reason == "" {
		w.event("error", func(b []byte) []byte { return appendAnthropicErrorBody(b, generationError(c)) })
		return
	}
	w.event("message_delta", func(b []byte) []byte {
		b = append(b, `,"delta":{"stop_reason":"`...)
		b = append(b, reason...)
		b = append(b, `","stop_sequence":`...)
		b = appendNullableString(b, seq)
		b = append(b, `},"usage":`...)
		return appendMessagesUsage(b, c, true)
	})
	w.event("message_stop", func(b []byte) []byte { return c.perf.appendMetadata(b) })
}

func (w *messagesWire) cut(c *choice) {
	w.c = c
	w.event("error", func(b []byte) []byte { return appendAnthropicErrorBody(b, errCut) })
}

// whole writes the message of a request that was not streamed; a
// generation that failed is an error.
func (w *messagesWire) whole(cs []*choice) error {
	c := cs[0]
	if reason, _ := stopReason(c); reason == "" {
		return generationError(c)
	}
	w.out = *outlineOf(c)
	b := w.appendMessage(make([]byte, 0, 1024+c.text.Len()), c, w.out.items, true)
	b = c.perf.appendMetadata(b[:len(b)-1])
	b = append(b, "}\n"...)
	return c.resp.out.writeWhole(b)
}

// stopReason is the message's stop_reason, and the stop sequence that
// ended it; "" for a generation that failed (error, timeout).
func stopReason(c *choice) (reason, seq string) {
	switch c.finishReason {
	case "stop":
		if c.stopSeq != "" {
			return "stop_sequence", c.stopSeq
		}
		return "end_turn", ""
	case "tool_calls":
		return "tool_use", ""
	case "length":
		return "max_tokens", ""
	}
	return "", ""
}

// generationError is the error of a generation that did not end well.
func generationError(c *choice) *Error {
	if c.finishReason == "timeout" {
		return &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "timeout",
			Message: "the generation was evicted: the client did not read its output in time"}
	}
	return &Error{Status: http.StatusInternalServerError, Type: typeServer, Message: "the generation failed: internal server error"}
}

// appendMessage appends the message object; at the start of a stream
// (final false) it has no content and no stop reason yet.
func (w *messagesWire) appendMessage(b []byte, c *choice, items []*outItem, final bool) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, c.resp.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendJSONString(b, c.resp.model)
	b = append(b, `,"content":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBlock(b, it, true)
	}
	b = append(b, `],"stop_reason":`...)
	reason, seq := "", ""
	if final {
		reason, seq = stopReason(c)
	}
	b = appendNullableString(b, reason)
	b = append(b, `,"stop_sequence":`...)
	b = appendNullableString(b, seq)
	b = append(b, `,"usage":`...)
	b = appendMessagesUsage(b, c, final)
	return append(b, '}')
}

// appendBlock appends a content block: whole, or as it starts in a
// stream (empty text, empty input).
func appendBlock(b []byte, it *outItem, whole bool) []byte {
	text := ""
	if whole {
		text = it.text.String()
	}
	switch it.kind {
	case itemReasoning:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendJSONString(b, text)
		return append(b, `,"signature":""}`...)
	case itemCall:
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendJSONString(b, it.callID)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, it.name)
		b = append(b, `,"input":`...)
		if !json.Valid([]byte(text)) {
			text = "{}" // a stream's start, or a call the output limit cut
		}
		return append(append(b, text...), '}')
	}
	b = append(b, `{"type":"text","text":`...)
	b = appendJSONString(b, text)
	return append(b, '}')
}

// appendMessagesUsage appends usage: before the end, the whole prompt as
// input and no output yet.
func appendMessagesUsage(b []byte, c *choice, final bool) []byte {
	input, cached, output := c.promptLen, 0, 0
	if final {
		cached = c.prefix.Cached
		input -= cached
		output = c.completion
	}
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, int64(input))
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":`...)
	b = appendInt(b, int64(cached))
	b = append(b, `,"output_tokens":`...)
	b = appendInt(b, int64(output))
	return append(b, '}')
}
