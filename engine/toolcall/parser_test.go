package toolcall

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// weather and clock are the tools of the tests.
var testTools = []Tool{
	{Name: "get_weather", Description: "Weather forecast.", Parameters: json.RawMessage(`{"type": "object", "properties": {
		"city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"},
		"units": {"type": "object"}, "tags": {"type": "array"}, "ratio": {"type": ["number", "null"]}, "when": {"anyOf": [{"type": "null"}, {"type": "integer"}]}}}`)},
	{Name: "get_time"},
}

// counter is a NewID that numbers the calls.
func counter() func() string {
	n := 0
	return func() string { n++; return "call_" + strconv.Itoa(n) }
}

func newTestParser(f Family, thinking bool) *Parser {
	return NewParser(f, testTools, Options{Thinking: thinking, NewID: counter()})
}

// parse feeds pieces to a fresh parser, then flushes it, and returns its
// events merged (see merge) and its calls.
func parse(f Family, thinking bool, pieces ...string) ([]Event, []Call) {
	p := newTestParser(f, thinking)
	var evs []Event
	for _, s := range pieces {
		evs = append(evs, p.Push(s)...)
	}
	evs = append(evs, p.Flush()...)
	return merge(evs), p.Calls()
}

// merge joins consecutive text events of one kind (and call): how a
// stream's deltas read once concatenated, whatever the fragments.
func merge(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if n := len(out); n > 0 && e.Kind == out[n-1].Kind && e.Index == out[n-1].Index && (e.Kind == Content || e.Kind == Reasoning || e.Kind == CallArgs) {
			out[n-1].Text += e.Text
			continue
		}
		out = append(out, e)
	}
	return out
}

// Shorthands for the expected events.
func content(s string) Event   { return Event{Kind: Content, Text: s} }
func reasoning(s string) Event { return Event{Kind: Reasoning, Text: s} }
func call(i int, name, args string) []Event {
	id := "call_" + strconv.Itoa(i+1)
	return []Event{{Kind: CallBegin, Index: i, ID: id, Name: name}, {Kind: CallArgs, Index: i, Text: args}, {Kind: CallEnd, Index: i}}
}

func events(parts ...any) []Event {
	var out []Event
	for _, p := range parts {
		switch p := p.(type) {
		case Event:
			out = append(out, p)
		case []Event:
			out = append(out, p...)
		}
	}
	return out
}

type parseCase struct {
	name     string
	family   Family
	thinking bool
	output   string
	want     []Event
}

var parseCases = []parseCase{
	// Hermes: Qwen2.5 and Qwen3.
	{"hermes one call", Hermes, false,
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>",
		events(call(0, "get_weather", `{"city": "Paris", "days": 3}`))},
	{"hermes text and two calls", Hermes, false,
		"Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
		events(content("Let me check both.\n"), call(0, "get_weather", `{"city": "Zürich"}`), call(1, "get_time", `{}`))},
	{"hermes text after", Hermes, false,
		"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": [\"UTC\", {\"x\": null}]}}\n</tool_call>\nDone.",
		events(call(0, "get_time", `{"tz": ["UTC", {"x": null}]}`), content("Done."))},
	{"hermes qwen3 thinking", Hermes, false,
		"<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		events(reasoning("The user wants the weather.\n"), call(0, "get_weather", `{"city": "Paris"}`))},
	{"hermes call inside thinking", Hermes, true,
		"I need the time.\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\nstill thinking</think>\n\nIt is noon.",
		events(reasoning("I need the time.\n"), call(0, "get_time", `{}`), reasoning("still thinking"), content("It is noon."))},
	{"hermes name last", Hermes, false,
		"<tool_call>\n{\"arguments\": {\"city\": \"Paris\"}, \"name\": \"get_weather\"}\n</tool_call>",
		events(call(0, "get_weather", `{"city": "Paris"}`))},
	{"hermes arguments as a string", Hermes, false,
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}\n</tool_call>",
		events(call(0, "get_weather", `{"city": "Paris"}`))},
	{"hermes no arguments", Hermes, false,
		"<tool_call>\n{\"name\": \"get_time\"}\n</tool_call>",
		events(call(0, "get_time", `{}`))},
	{"hermes unknown tool is content", Hermes, false,
		"<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call>",
		events(content("<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call>"))},
	{"hermes not JSON is content", Hermes, false,
		"Use <tool_call> tags, like <tool_call>{name: x}</tool_call>.",
		events(content("Use <tool_call> tags, like <tool_call>{name: x}</tool_call>."))},
	{"hermes malformed after the name", Hermes, false,
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\" 3}}\n</tool_call>",
		events(call(0, "get_weather", `{"city": "Paris"}`), content("3}}\n</tool_call>"))},
	{"hermes cut off in a string", Hermes, false,
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
		events(call(0, "get_weather", `{"city": "Par"}`))},
	{"hermes cut off before the name", Hermes, false,
		"Sure. <tool_call>\n{\"name\": \"get_wea",
		events(content("Sure. <tool_call>\n{\"name\": \"get_wea"))},
	{"hermes complete JSON without the closing tag", Hermes, false,
		"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}",
		events(call(0, "get_time", `{"tz": "UTC"}`))},
	{"hermes two objects in one block", Hermes, false,
		"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>",
		events(call(0, "get_time", `{}`), call(1, "get_time", `{"tz": "UTC"}`))},
	{"hermes reads an XML body", Hermes, false,
		"<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
		events(call(0, "get_time", `{}`))},
	{"hermes partial markers are text", Hermes, false,
		"a <tool_ b <think> c </tool_call>",
		events(content("a <tool_ b <think> c </tool_call>"))},

	// QwenXML: Qwen3.5 and Qwen3-Coder.
	{"qwen_xml one call", QwenXML, true,
		"The user asks for the weather.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
		events(reasoning("The user asks for the weather.\n"), call(0, "get_weather", `{"city": "Paris", "days": 3}`))},
	{"qwen_xml typed values", QwenXML, false,
		"<tool_call>\n<function=get_weather>\n<parameter=city>\nNew \"York\"\nline two\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n<parameter=units>\n{\"temp\": \"C\",\n \"wind\": \"kmh\"}\n</parameter>\n<parameter=tags>\n[\"a\", 2]\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n<parameter=when>\n12\n</parameter>\n<parameter=days>\nthree\n</parameter>\n<parameter=extra>\n42\n</parameter>\n</function>\n</tool_call>",
		events(call(0, "get_weather", `{"city": "New \"York\"\nline two", "metric": true, "units": {"temp":"C","wind":"kmh"}, "tags": ["a",2], "ratio": 0.5, "when": 12, "days": "three", "extra": "42"}`))},
	{"qwen_xml two calls and text", QwenXML, false,
		"Checking.\n\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nLyon\n</parameter>\n</function>\n</tool_call>",
		events(content("Checking.\n\n"), call(0, "get_time", `{}`), call(1, "get_weather", `{"city": "Lyon"}`))},
	{"qwen_xml missing closing tags", QwenXML, false,
		"<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n<parameter=days>\n2\n</function>\n</tool_call>",
		events(call(0, "get_weather", `{"city": "Oslo", "days": 2}`))},
	{"qwen_xml value keeps inner newlines", QwenXML, false,
		"<tool_call>\n<function=get_weather>\n<parameter=city>\n\nA\n\n</parameter>\n</function>\n</tool_call>",
		events(call(0, "get_weather", `{"city": "\nA\n"}`))},
	{"qwen_xml unknown function is content", QwenXML, false,
		"<tool_call>\n<function=format_disk>\n</function>\n</tool_call>",
		events(content("<tool_call>\n<function=format_disk>\n</function>\n</tool_call>"))},
	{"qwen_xml cut off in a value", QwenXML, false,
		"<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
		events(call(0, "get_weather", `{"city": "Par"}`))},
	{"qwen_xml reads a JSON body", QwenXML, false,
		"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
		events(call(0, "get_time", `{}`))},
	{"qwen_xml garbage after the name ends the call", QwenXML, false,
		"<tool_call>\n<function=get_time>\nhello",
		events(call(0, "get_time", `{}`), content("hello"))},

	// Llama 3.x.
	{"llama3 one call", Llama3, false,
		"{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 1}}",
		events(call(0, "get_weather", `{"city": "Paris", "days": 1}`))},
	{"llama3 python tag and two calls", Llama3, false,
		"<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; {\"name\": \"get_time\", \"parameters\": {}}",
		events(call(0, "get_weather", `{"city": "Paris"}`), call(1, "get_time", `{}`))},
	{"llama3 type first", Llama3, false,
		"<|python_tag|>{\"type\": \"function\", \"name\": \"get_time\", \"parameters\": {\"tz\": \"UTC\"}}",
		events(call(0, "get_time", `{"tz": "UTC"}`))},
	{"llama3 plain answer", Llama3, false,
		"The weather in Paris is {\"sunny\"}.",
		events(content("The weather in Paris is {\"sunny\"}."))},
	{"llama3 unknown name is content", Llama3, false,
		"Example: {\"name\": \"John\", \"age\": 3}",
		events(content("Example: {\"name\": \"John\", \"age\": 3}"))},
	{"llama3 semicolon then text", Llama3, false,
		"{\"name\": \"get_time\", \"parameters\": {}}; bye",
		events(call(0, "get_time", `{}`), content("; bye"))},
}

// TestParse: realistic outputs of each family parse to the expected
// events, whole and split at every byte (in two pieces, and a byte at a
// time), and Calls holds what the events say.
func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, calls := parse(tc.family, tc.thinking, tc.output)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			checkCalls(t, got, calls)
			for i := 1; i < len(tc.output); i++ {
				split, _ := parse(tc.family, tc.thinking, tc.output[:i], tc.output[i:])
				if diff := cmp.Diff(tc.want, split); diff != "" {
					t.Fatalf("split at %d %q: events (-want +got):\n%s", i, tc.output[:i], diff)
				}
			}
			bytes := strings.Split(tc.output, "")
			if diff := cmp.Diff(tc.want, first(parse(tc.family, tc.thinking, bytes...))); diff != "" {
				t.Fatalf("a byte at a time: events (-want +got):\n%s", diff)
			}
		})
	}
}

func first(evs []Event, _ []Call) []Event { return evs }

// checkCalls checks that evs, merged, open, fill and close each call in
// order, that the arguments are JSON objects, and that calls are theirs.
func checkCalls(t *testing.T, evs []Event, calls []Call) {
	t.Helper()
	var got []Call
	open := false
	for _, e := range evs {
		switch e.Kind {
		case CallBegin:
			if open || e.Index != len(got) {
				t.Fatalf("CallBegin %+v out of order", e)
			}
			open = true
			got = append(got, Call{ID: e.ID, Name: e.Name})
		case CallArgs:
			if !open || e.Index != len(got)-1 {
				t.Fatalf("CallArgs %+v outside its call", e)
			}
			got[e.Index].Arguments += e.Text
		case CallEnd:
			if !open || e.Index != len(got)-1 {
				t.Fatalf("CallEnd %+v outside its call", e)
			}
			open = false
			if a := got[e.Index].Arguments; !isObject(a) {
				t.Fatalf("call %d arguments %q are not a JSON object", e.Index, a)
			}
		}
	}
	if open {
		t.Fatal("a call is still open after Flush")
	}
	if diff := cmp.Diff(got, calls); diff != "" {
		t.Fatalf("Calls differ from the events (-events +Calls):\n%s", diff)
	}
}
