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

// called reports whether the choice made tool calls.
func (a *agentOut) called() bool { return a != nil && len(a.p.Calls()) > 0 }
