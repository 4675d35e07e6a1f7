package openai

import (
	"github.com/kiln-ai/kiln/engine/toolcall"
	"github.com/kiln-ai/kiln/server/wire"
)

// Tool calls in the OpenAI format: a streamed chunk's delta carries the
// call pieces its token completed (server/wire/toolcalls.go), a whole message the
// calls with their arguments.

// appendDelta appends a chunk's delta object for pc: content always (""
// when the token added none), reasoning_content and tool_calls when
// present.
func appendDelta(b []byte, role bool, pc *wire.Piece) []byte {
	b = append(b, '{')
	if role {
		b = append(b, `"role":"assistant",`...)
	}
	b = append(b, `"content":`...)
	b = wire.AppendJSONString(b, pc.Content)
	if pc.Reasoning != "" {
		b = append(b, `,"reasoning_content":`...)
		b = wire.AppendJSONString(b, pc.Reasoning)
	}
	if len(pc.Calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, ev := range pc.Calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCallDelta(b, ev)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendCallDelta appends one tool_calls element of a delta.
func appendCallDelta(b []byte, ev toolcall.Event) []byte {
	b = append(b, `{"index":`...)
	b = wire.AppendInt(b, int64(ev.Index))
	if ev.Kind == toolcall.CallBegin {
		b = append(b, `,"id":`...)
		b = wire.AppendJSONString(b, ev.ID)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = wire.AppendJSONString(b, ev.Name)
		b = append(b, `,"arguments":`...)
		b = wire.AppendJSONString(b, ev.Text)
		return append(b, "}}"...)
	}
	b = append(b, `,"function":{"arguments":`...)
	b = wire.AppendJSONString(b, ev.Text)
	return append(b, "}}"...)
}

// appendAgentMessage appends a whole choice's message: the content (null when
// there is none and the model called tools), the calls, and the thinking
// section.
func appendAgentMessage(b []byte, a *wire.AgentOut) []byte {
	calls := a.Parser.Calls()
	b = append(b, `{"role":"assistant","content":`...)
	if c := a.Content.String(); c == "" && len(calls) > 0 {
		b = append(b, "null"...)
	} else {
		b = wire.AppendJSONString(b, c)
	}
	b = append(b, `,"refusal":null`...)
	if r := a.Reasoning.String(); r != "" {
		b = append(b, `,"reasoning_content":`...)
		b = wire.AppendJSONString(b, r)
	}
	if len(calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = wire.AppendJSONString(b, c.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = wire.AppendJSONString(b, c.Name)
			b = append(b, `,"arguments":`...)
			b = wire.AppendJSONString(b, c.Arguments)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
