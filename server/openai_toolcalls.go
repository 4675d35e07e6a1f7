package server

import "github.com/kiln-ai/kiln/engine/toolcall"

// Tool calls in the OpenAI format: a streamed chunk's delta carries the
// call pieces its token completed (toolstream.go), a whole message the
// calls with their arguments.

// appendDelta appends a chunk's delta object for pc: content always (""
// when the token added none), reasoning_content and tool_calls when
// present.
func appendDelta(b []byte, role bool, pc *piece) []byte {
	b = append(b, '{')
	if role {
		b = append(b, `"role":"assistant",`...)
	}
	b = append(b, `"content":`...)
	b = appendJSONString(b, pc.content)
	if pc.reasoning != "" {
		b = append(b, `,"reasoning_content":`...)
		b = appendJSONString(b, pc.reasoning)
	}
	if len(pc.calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, ev := range pc.calls {
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
	b = appendInt(b, int64(ev.Index))
	if ev.Kind == toolcall.CallBegin {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, ev.ID)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = appendJSONString(b, ev.Name)
		b = append(b, `,"arguments":`...)
		b = appendJSONString(b, ev.Text)
		return append(b, "}}"...)
	}
	b = append(b, `,"function":{"arguments":`...)
	b = appendJSONString(b, ev.Text)
	return append(b, "}}"...)
}

// appendAgentMessage appends a whole choice's message: the content (null when
// there is none and the model called tools), the calls, and the thinking
// section.
func appendAgentMessage(b []byte, a *agentOut) []byte {
	calls := a.p.Calls()
	b = append(b, `{"role":"assistant","content":`...)
	if c := a.content.String(); c == "" && len(calls) > 0 {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, c)
	}
	b = append(b, `,"refusal":null`...)
	if r := a.reasoning.String(); r != "" {
		b = append(b, `,"reasoning_content":`...)
		b = appendJSONString(b, r)
	}
	if len(calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, c.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendJSONString(b, c.Name)
			b = append(b, `,"arguments":`...)
			b = appendJSONString(b, c.Arguments)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
