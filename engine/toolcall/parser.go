package toolcall

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// Tool is a function the model may call (an entry of OpenAI's tools).
type Tool struct {
	Name, Description string
	// Parameters is the JSON Schema object of the arguments; nil for a
	// function without parameters. QwenXML reads its properties' types.
	Parameters json.RawMessage
}

// Call is a call the model made.
type Call struct {
	ID, Name string
	// Arguments is the JSON object text of the arguments.
	Arguments string
}

// Options tune a Parser.
type Options struct {
	// Thinking says the prompt opened a think section (as Qwen3.5's
	// generation prompt does): the output is reasoning until </think>.
	Thinking bool
	// NewID gives each call its id; the default is "call_" and 24
	// random hex digits.
	NewID func() string
}

// EventKind says what an Event is.
type EventKind int

const (
	// Content is text for the answer.
	Content EventKind = iota
	// Reasoning is text of a think section.
	Reasoning
	// CallBegin opens call Index, whose ID and Name it carries.
	CallBegin
	// CallArgs is a fragment of call Index's arguments: in order, the
	// fragments make its Arguments exactly.
	CallArgs
	// CallEnd closes call Index.
	CallEnd
)

func (k EventKind) String() string {
	return [...]string{"content", "reasoning", "call_begin", "call_args", "call_end"}[k]
}

// Event is a piece of the parsed output, in the order of the stream
// deltas of OpenAI's chat API.
type Event struct {
	Kind EventKind
	// Index is the call's index among the output's calls (CallBegin,
	// CallArgs, CallEnd).
	Index int
	// ID and Name are the call's (CallBegin).
	ID, Name string
	// Text is the text of Content, Reasoning and CallArgs.
	Text string
}

// Limits that bound a parser's memory whatever the model writes: text
// held while a call's beginning is read (the opener, the name), the name
// of a function or parameter, a Hermes call read whole because its name
// does not come first, and a QwenXML value buffered to be typed.
const (
	maxHeld     = 4 << 10
	maxName     = 256
	maxBuffered = 1 << 20
)

// state is what the parser is reading.
type state uint8

const (
	stText      state = iota // content or reasoning
	stSkipSpace              // white space after </think> or a call, dropped
	stBody                   // after <tool_call>, <|python_tag|> or Llama3's ';': a call's body is due
	stJSON                   // a JSON call (jsoncall.go)
	stAfterJSON              // after a JSON call: </tool_call>, another call
	stXMLName                // the name of <function=NAME> (xmlcall.go)
	stXMLBody                // between a QwenXML call's parameters
	stXMLKey                 // the name of <parameter=KEY>
	stXMLValue               // a parameter's value
	stAfterXML               // after </function>: </tool_call>
)

// Parser reads a model's output, as it is generated, into content,
// reasoning and tool calls. It is not safe for concurrent use.
type Parser struct {
	family  Family
	tools   map[string]paramTypes
	newID   func() string
	markers [2][]string // what ends text: [reasoning]

	buf       string // text received and not yet consumed
	state     state
	started   bool // some text has been read
	reasoning bool

	held  []byte // the text of a call that has not begun, content if it fails
	begun bool   // call len(calls) has begun
	cur   Call
	args  strings.Builder // its arguments so far

	json jsonCall
	xml  xmlCall

	calls  []Call
	events []Event
}

// NewParser returns a parser of family f's output for a request offering
// tools. A call naming a function that is not among tools is content.
func NewParser(f Family, tools []Tool, opt Options) *Parser {
	p := &Parser{family: f, tools: make(map[string]paramTypes, len(tools)), newID: opt.NewID, reasoning: opt.Thinking}
	for _, t := range tools {
		p.tools[t.Name] = schemaTypes(t.Parameters)
	}
	if p.newID == nil {
		p.newID = newID
	}
	p.markers[0] = f.Openers()
	p.markers[1] = append(slices.Clip(f.Openers()), thinkClose)
	return p
}

// newID is "call_" and 24 random hex digits.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return "call_" + hex.EncodeToString(b[:])
}

// Push reads the next fragment of the output, which may split anything
// anywhere, and returns the events it completes. It holds back only text
// that may still begin a marker (an opener, </think>), a QwenXML value's
// possible end, or the beginning of a call whose name is not yet known.
// The events are valid until the next call to Push or Flush.
func (p *Parser) Push(text string) []Event {
	if p.buf == "" {
		p.buf = text
	} else {
		p.buf += text
	}
	p.events = p.events[:0]
	p.run(false)
	return p.events
}

// Flush ends the output: text held back is released, a call whose
// beginning was being read (no name yet) is content, and a call cut off
// after it began is ended, its arguments closed to a JSON object.
func (p *Parser) Flush() []Event {
	p.events = p.events[:0]
	p.run(true)
	return p.events
}

// Calls are the calls ended so far.
func (p *Parser) Calls() []Call { return slices.Clone(p.calls) }

// run reads p.buf until a state needs more text (or, when final, until it
// is all read). Each step consumes text or changes the state.
func (p *Parser) run(final bool) {
	for {
		var n int
		var wait bool
		switch p.state {
		case stText:
			n, wait = p.stepText(final)
		case stSkipSpace:
			n, wait = p.stepSkipSpace(final)
		case stBody:
			n, wait = p.stepBody(final)
		case stJSON:
			n, wait = p.stepJSON(final)
		case stAfterJSON:
			n, wait = p.stepAfterJSON(final)
		case stXMLName, stXMLKey:
			n, wait = p.stepXMLName(final)
		case stXMLBody:
			n, wait = p.stepXMLBody(final)
		case stXMLValue:
			n, wait = p.stepXMLValue(final)
		case stAfterXML:
			n, wait = p.stepAfterXML(final)
		}
		p.buf = p.buf[n:]
		if wait {
			return
		}
	}
}

// text emits s as content, or reasoning inside a think section.
func (p *Parser) text(s string) {
	if s == "" {
		return
	}
	k := Content
	if p.reasoning {
		k = Reasoning
	}
	p.events = append(p.events, Event{Kind: k, Text: s})
}

// release gives up the call whose beginning was being read: its text is
// content, and text is read again from where it failed.
func (p *Parser) release() {
	p.text(string(p.held))
	p.held = p.held[:0]
	p.state = stText
}

// begin opens a call of the function name.
func (p *Parser) begin(name string) {
	p.begun, p.held = true, p.held[:0]
	p.cur = Call{ID: p.newID(), Name: name}
	p.args.Reset()
	p.events = append(p.events, Event{Kind: CallBegin, Index: len(p.calls), ID: p.cur.ID, Name: name})
}

// arg emits a fragment of the open call's arguments.
func (p *Parser) arg(s string) {
	if s == "" {
		return
	}
	p.args.WriteString(s)
	p.events = append(p.events, Event{Kind: CallArgs, Index: len(p.calls), Text: s})
}

// end closes the open call.
func (p *Parser) end() {
	p.cur.Arguments = p.args.String()
	p.events = append(p.events, Event{Kind: CallEnd, Index: len(p.calls)})
	p.calls = append(p.calls, p.cur)
	p.begun = false
}

// known says whether name is a tool of the request.
func (p *Parser) known(name string) bool {
	_, ok := p.tools[name]
	return ok
}
