package server

import (
	"strings"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// Tool calls on the wire. When a request offers tools, each choice's text
// goes through the model family's tool-call parser (engine/toolcall): its
// content, its thinking section and its calls are told apart as the text
// arrives. Every token still gets exactly one chunk (tokens.go); a token's
// chunk carries the content and the call pieces the token completed:
// a call's first piece has its index, id, type and name, later ones
// argument fragments whose concatenation is the call's arguments, as
// OpenAI streams them. A choice that made calls and stopped ends with
// finish_reason "tool_calls".

// agentOut is what a choice's parser made of its text so far.
type agentOut struct {
	p         *toolcall.Parser
	content   strings.Builder // the text outside calls and thinking
	reasoning strings.Builder // the thinking section
}

// piece is what one token's text added: the chunk's delta.
type piece struct {
	content   string
	reasoning string
	calls     []toolcall.Event // CallBegin and CallArgs events
}

func (p *piece) empty() bool { return p.content == "" && p.reasoning == "" && len(p.calls) == 0 }

// push parses text and returns the piece it adds.
func (a *agentOut) push(text string) piece {
	return a.collect(a.p.Push(text))
}

// flush ends the parse at the end of the generation.
func (a *agentOut) flush() piece {
	return a.collect(a.p.Flush())
}

func (a *agentOut) collect(evs []toolcall.Event) piece {
	var pc piece
	var content, reasoning strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case toolcall.Content:
			content.WriteString(ev.Text)
		case toolcall.Reasoning:
			reasoning.WriteString(ev.Text)
		case toolcall.CallBegin, toolcall.CallArgs:
			pc.calls = append(pc.calls, ev)
		}
	}
	pc.content, pc.reasoning = content.String(), reasoning.String()
	a.content.WriteString(pc.content)
	a.reasoning.WriteString(pc.reasoning)
	return pc
}

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

// appendMessage appends a whole choice's message: the content (null when
// there is none and the model called tools), the calls, and the thinking
// section.
func (a *agentOut) appendMessage(b []byte) []byte {
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

// called reports whether the choice made tool calls.
func (a *agentOut) called() bool { return a != nil && len(a.p.Calls()) > 0 }
