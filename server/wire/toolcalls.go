package wire

import (
	"strings"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// Tool calls on the wire. When a request offers tools, each choice's text
// goes through the model family's tool-call parser (engine/toolcall): its
// content, its thinking section and its calls are told apart as the text
// arrives. Every token still gets exactly one chunk (server/tokens.go); a token's
// chunk carries the content and the call pieces the token completed:
// a call's first piece has its index, id, type and name, later ones
// argument fragments whose concatenation is the call's arguments, as
// OpenAI streams them. A choice that made calls and stopped ends with
// finish_reason "tool_calls".

// AgentOut is what a choice's parser made of its text so far.
type AgentOut struct {
	Parser    *toolcall.Parser
	Content   strings.Builder // the text outside calls and thinking
	Reasoning strings.Builder // the thinking section
}

// Piece is what one token's text added: the chunk's delta.
type Piece struct {
	Content   string
	Reasoning string
	Calls     []toolcall.Event // CallBegin and CallArgs events
}

// Empty reports whether the piece adds nothing.
func (p *Piece) Empty() bool { return p.Content == "" && p.Reasoning == "" && len(p.Calls) == 0 }

// Push parses text and returns the piece it adds.
func (a *AgentOut) Push(text string) Piece {
	return a.collect(a.Parser.Push(text))
}

// Flush ends the parse at the end of the generation.
func (a *AgentOut) Flush() Piece {
	return a.collect(a.Parser.Flush())
}

func (a *AgentOut) collect(evs []toolcall.Event) Piece {
	var pc Piece
	var content, reasoning strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case toolcall.Content:
			content.WriteString(ev.Text)
		case toolcall.Reasoning:
			reasoning.WriteString(ev.Text)
		case toolcall.CallBegin, toolcall.CallArgs:
			pc.Calls = append(pc.Calls, ev)
		}
	}
	pc.Content, pc.Reasoning = content.String(), reasoning.String()
	a.Content.WriteString(pc.Content)
	a.Reasoning.WriteString(pc.Reasoning)
	return pc
}

// Called reports whether the choice made tool calls.
func (a *AgentOut) Called() bool { return a != nil && len(a.Parser.Calls()) > 0 }
