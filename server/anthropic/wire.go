package anthropic

import (
	"encoding/json"
	"net/http"

	"github.com/kiln-ai/kiln/server/wire"
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

var _ wire.Wire = (*Wire)(nil)

// Wire is a Messages response's state (one choice); its zero value is
// ready.
type Wire struct {
	out wire.Outline
	c   *wire.Choice
}

// event writes one named event whose data is {"type":name, ...fill}.
func (w *Wire) event(name string, fill func([]byte) []byte) {
	w.c.Resp.Out.WriteNamed(name, func(b []byte) []byte {
		b = append(b, `{"type":"`...)
		b = append(b, name...)
		b = append(b, '"')
		if fill != nil {
			b = fill(b)
		}
		return append(b, '}')
	})
}

// NewWire is the wire of one response.
func NewWire() *Wire { return &Wire{} }

// Open writes message_start and a ping.
func (w *Wire) Open(c *wire.Choice) {
	w.c = c
	w.event("message_start", func(b []byte) []byte {
		b = append(b, `,"message":`...)
		return w.appendMessage(b, c, nil, false)
	})
	w.event("ping", nil)
}

// Piece writes the block events the token's piece makes.
func (w *Wire) Piece(c *wire.Choice, pc *wire.Piece, lp *wire.TokenLogprob) {
	w.c = c
	w.out.Push(pc, lp, w)
}

// Begin implements wire.Sink: content_block_start.
func (w *Wire) Begin(it *wire.Item) {
	w.event("content_block_start", func(b []byte) []byte {
		b = w.appendIndex(b, it)
		b = append(b, `,"content_block":`...)
		return appendBlock(b, it, false)
	})
}

// Delta implements wire.Sink: content_block_delta.
func (w *Wire) Delta(it *wire.Item, text string, _ []wire.TokenLogprob) {
	w.event("content_block_delta", func(b []byte) []byte {
		b = w.appendIndex(b, it)
		switch it.Kind {
		case wire.ItemText:
			b = append(b, `,"delta":{"type":"text_delta","text":`...)
		case wire.ItemReasoning:
			b = append(b, `,"delta":{"type":"thinking_delta","thinking":`...)
		default:
			b = append(b, `,"delta":{"type":"input_json_delta","partial_json":`...)
		}
		b = wire.AppendJSONString(b, text)
		return append(b, '}')
	})
}

// Finish implements wire.Sink: content_block_stop.
func (w *Wire) Finish(it *wire.Item) {
	w.event("content_block_stop", func(b []byte) []byte { return w.appendIndex(b, it) })
}

func (w *Wire) appendIndex(b []byte, it *wire.Item) []byte {
	b = append(b, `,"index":`...)
	return wire.AppendInt(b, int64(w.out.Index(it)))
}

// Close ends the open block and writes message_delta and message_stop,
// or the error event of a generation that failed.
func (w *Wire) Close(cs []*wire.Choice) {
	c := cs[0]
	w.c = c
	w.out.End(w)
	reason, seq := stopReason(c)
	if reason == "" {
		w.event("error", func(b []byte) []byte { return appendAnthropicErrorBody(b, generationError(c)) })
		return
	}
	w.event("message_delta", func(b []byte) []byte {
		b = append(b, `,"delta":{"stop_reason":"`...)
		b = append(b, reason...)
		b = append(b, `","stop_sequence":`...)
		b = wire.AppendNullableString(b, seq)
		b = append(b, `},"usage":`...)
		return appendMessagesUsage(b, c, true)
	})
	w.event("message_stop", func(b []byte) []byte { return c.Perf.AppendMetadata(b) })
}

// Cut writes the error event of a stream the shutdown grace cut.
func (w *Wire) Cut(c *wire.Choice) {
	w.c = c
	w.event("error", func(b []byte) []byte { return appendAnthropicErrorBody(b, wire.ErrCut) })
}

// Timing writes the token's kiln.token_timing event.
func (w *Wire) Timing(c *wire.Choice, ev *latency.TokenEvent) {
	w.c = c
	w.event("kiln.token_timing", func(b []byte) []byte { return wire.AppendTimingField(b, ev) })
}

// Whole writes the message of a request that was not streamed; a
// generation that failed is an error.
func (w *Wire) Whole(cs []*wire.Choice) error {
	c := cs[0]
	if reason, _ := stopReason(c); reason == "" {
		return generationError(c)
	}
	w.out = *wire.OutlineOf(c)
	b := w.appendMessage(make([]byte, 0, 1024+c.Text.Len()), c, w.out.Items, true)
	b = c.Perf.AppendMetadata(b[:len(b)-1])
	b = append(b, "}\n"...)
	return c.Resp.Out.WriteWhole(b)
}

// stopReason is the message's stop_reason, and the stop sequence that
// ended it; "" for a generation that failed (error, timeout).
func stopReason(c *wire.Choice) (reason, seq string) {
	switch c.FinishReason {
	case "stop":
		if c.StopSequence != "" {
			return "stop_sequence", c.StopSequence
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
func generationError(c *wire.Choice) *wire.Error {
	if c.FinishReason == "timeout" {
		return &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "timeout",
			Message: "the generation was evicted: the client did not read its output in time"}
	}
	return &wire.Error{Status: http.StatusInternalServerError, Type: wire.TypeServer, Message: "the generation failed: internal server error"}
}

// appendMessage appends the message object; at the start of a stream
// (final false) it has no content and no stop reason yet.
func (w *Wire) appendMessage(b []byte, c *wire.Choice, items []*wire.Item, final bool) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendJSONString(b, c.Resp.ID)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = wire.AppendJSONString(b, c.Resp.Model)
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
	b = wire.AppendNullableString(b, reason)
	b = append(b, `,"stop_sequence":`...)
	b = wire.AppendNullableString(b, seq)
	b = append(b, `,"usage":`...)
	b = appendMessagesUsage(b, c, final)
	return append(b, '}')
}

// appendBlock appends a content block: whole, or as it starts in a
// stream (empty text, empty input).
func appendBlock(b []byte, it *wire.Item, whole bool) []byte {
	text := ""
	if whole {
		text = it.Text.String()
	}
	switch it.Kind {
	case wire.ItemReasoning:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = wire.AppendJSONString(b, text)
		return append(b, `,"signature":""}`...)
	case wire.ItemCall:
		b = append(b, `{"type":"tool_use","id":`...)
		b = wire.AppendJSONString(b, it.CallID)
		b = append(b, `,"name":`...)
		b = wire.AppendJSONString(b, it.Name)
		b = append(b, `,"input":`...)
		if !json.Valid([]byte(text)) {
			text = "{}" // a stream's start, or a call the output limit cut
		}
		return append(append(b, text...), '}')
	}
	b = append(b, `{"type":"text","text":`...)
	b = wire.AppendJSONString(b, text)
	return append(b, '}')
}

// appendMessagesUsage appends usage: before the end, the whole prompt as
// input and no output yet.
func appendMessagesUsage(b []byte, c *wire.Choice, final bool) []byte {
	input, cached, output := c.PromptLen, 0, 0
	if final {
		cached = c.Prefix.Cached
		input -= cached
		output = c.Completion
	}
	b = append(b, `{"input_tokens":`...)
	b = wire.AppendInt(b, int64(input))
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":`...)
	b = wire.AppendInt(b, int64(cached))
	b = append(b, `,"output_tokens":`...)
	b = wire.AppendInt(b, int64(output))
	return append(b, '}')
}
