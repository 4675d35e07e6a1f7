package toolcall

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDetect reads the family from the real templates of engine/chat's
// testdata, the default ChatML template among them.
func TestDetect(t *testing.T) {
	tests := []struct {
		template string
		want     Family
	}{
		{"qwen2.5.jinja", Hermes},
		{"qwen3.5.jinja", QwenXML},
		{"llama3.2.jinja", Llama3},
		{"llama3.jinja", Hermes}, // no tool calling: the default
		{"smollm2.jinja", Hermes},
	}
	for _, tt := range tests {
		src, err := os.ReadFile(filepath.Join("..", "chat", "testdata", tt.template))
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(string(src)); got != tt.want {
			t.Errorf("Detect(%s) = %v, want %v", tt.template, got, tt.want)
		}
	}
	for src, want := range map[string]Family{
		"{{ '<|python_tag|>' + tool_call.name }}":                         Llama3,
		`{"name": function name, "parameters": ...}<|eom_id|>`:            Llama3,
		`"parameters" alone is not Llama's`:                               Hermes,
		"<tool_call>\n<function=example_function_name>\n</function>":      QwenXML,
		"{{ '<tool_call>\\n' + tool_call | tojson + '\\n</tool_call>' }}": Hermes,
	} {
		if got := Detect(src); got != want {
			t.Errorf("Detect(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestFamilyNames(t *testing.T) {
	got := map[string][]string{}
	for _, f := range []Family{Hermes, QwenXML, Llama3} {
		got[f.String()] = f.Openers()
	}
	want := map[string][]string{"hermes": {"<tool_call>"}, "qwen_xml": {"<tool_call>"}, "llama3": {`{"name"`, "<|python_tag|>"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStreaming: the parser holds back no more than may still become
// markup, and streams a call's arguments as they arrive.
func TestStreaming(t *testing.T) {
	tests := []struct {
		name   string
		family Family
		pushes []string
		want   [][]Event // the events of each push
	}{
		{"opener's start held, then released", Hermes, []string{"abc<tool_", "x"},
			[][]Event{{content("abc")}, {content("<tool_x")}}},
		{"think close held", Hermes, []string{"<think>a</th", "ink>b"},
			[][]Event{{reasoning("a")}, {content("b")}}},
		{"hermes arguments stream", Hermes, []string{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa", "ris\", \"days\": 2", "}}"},
			[][]Event{
				{{Kind: CallBegin, ID: "call_1", Name: "get_weather"}, {Kind: CallArgs, Text: `{"city": "Pa`}},
				{{Kind: CallArgs, Text: `ris", "days": 2`}},
				{{Kind: CallArgs, Text: "}"}, {Kind: CallEnd}},
			}},
		{"qwen_xml string values stream", QwenXML, []string{"<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Fr", "ancisco\n", "</param", "eter>\n<parameter=days>\n2\n</parameter>\n</function>"},
			[][]Event{
				{{Kind: CallBegin, ID: "call_1", Name: "get_weather"}, {Kind: CallArgs, Text: `{"city": "`}, {Kind: CallArgs, Text: "San Fr"}},
				{{Kind: CallArgs, Text: "ancisco"}},
				nil,
				{{Kind: CallArgs, Text: `"`}, {Kind: CallArgs, Text: `, "days": `}, {Kind: CallArgs, Text: "2"}, {Kind: CallArgs, Text: "}"}, {Kind: CallEnd}},
			}},
		{"llama3 opener held", Llama3, []string{"{\"na", "me\": \"get_time\", \"parameters\": {}}"},
			[][]Event{nil, {{Kind: CallBegin, ID: "call_1", Name: "get_time"}, {Kind: CallArgs, Text: "{}"}, {Kind: CallEnd}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestParser(tt.family, false)
			for i, s := range tt.pushes {
				got := append([]Event(nil), p.Push(s)...)
				if diff := cmp.Diff(tt.want[i], got); diff != "" {
					t.Errorf("push %d %q (-want +got):\n%s", i, s, diff)
				}
			}
		})
	}
}

func TestNewID(t *testing.T) {
	p := NewParser(Hermes, []Tool{{Name: "f"}}, Options{})
	p.Push(`<tool_call>{"name": "f"}</tool_call><tool_call>{"name": "f"}</tool_call>`)
	calls := p.Calls()
	id := regexp.MustCompile(`^call_[0-9a-f]{24}$`)
	if len(calls) != 2 || !id.MatchString(calls[0].ID) || !id.MatchString(calls[1].ID) || calls[0].ID == calls[1].ID {
		t.Errorf("calls %+v: want two distinct ids call_ and 24 hex digits", calls)
	}
}
