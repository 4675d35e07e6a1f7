package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// toolCases is testdata/tools/cases.json: tool-calling conversations in
// the shape of OpenAI's chat API, and the templates to render them with.
type toolCases struct {
	Tools []struct {
		Function struct {
			Name, Description string
			Parameters        json.RawMessage
		}
	}
	Conversations map[string]struct {
		Tools    bool
		Messages []openAIMessage
	}
	Cases []struct {
		Name, Template, Conversation, BOS, EOS string
		Kwargs                                 map[string]any
		NullAsEmpty                            bool `json:"null_as_empty"`
	}
}

// openAIMessage is a message as OpenAI's chat API carries it.
type openAIMessage struct {
	Role      string
	Content   *string
	ToolCalls []struct {
		ID       string
		Function struct{ Name, Arguments string }
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
	Name       string
}

// message converts m as the server does.
func (m openAIMessage) message(nullAsEmpty bool) Message {
	out := Message{Role: m.Role, ToolCallID: m.ToolCallID, Name: m.Name}
	switch {
	case m.Content != nil:
		out.Content = *m.Content
	case !nullAsEmpty:
		out.NullContent = true
	}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return out
}

func loadToolCases(t *testing.T) toolCases {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tools", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c toolCases
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// toolTemplate loads a template named in cases.json.
func toolTemplate(t *testing.T, name string) *Template {
	t.Helper()
	switch name {
	case "chatml":
		return ChatML()
	case "qwen3":
		return qwen3Template(t)
	}
	return load(t, name)
}

// TestRenderTools renders the tool-calling conversations of
// testdata/tools/cases.json (system and tools, user, assistant tool calls
// with and without text, tool results, the generation prompt; the tools
// given or not) with ChatML and the real Qwen2.5, Qwen3, Qwen3.5 and
// Llama 3.2 templates, and compares with testdata/tools/<case>.txt: what
// Python's jinja2 renders from the same conversations as transformers and
// vLLM hand them to the template (render.py wrote the files). Where the
// Go engine is known to differ, <case>.engine.txt is what it renders
// instead: ardanlabs/jinja's tojson(indent=4), with which Llama 3.1 and
// 3.2 write the tools, sorts their keys and escapes <, > and & (Python's
// keeps the order written). The spans of every rendering are exact and
// cover the strings the template writes.
func TestRenderTools(t *testing.T) {
	cases := loadToolCases(t)
	var tools []ToolSpec
	for _, tl := range cases.Tools {
		tools = append(tools, ToolSpec{Name: tl.Function.Name, Description: tl.Function.Description, Parameters: tl.Function.Parameters})
	}
	for _, tc := range cases.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "tools", tc.Name+".engine.txt"))
			if errors.Is(err, os.ErrNotExist) {
				want, err = os.ReadFile(filepath.Join("testdata", "tools", tc.Name+".txt"))
			}
			if err != nil {
				t.Fatal(err)
			}
			conv := cases.Conversations[tc.Conversation]
			var msgs []Message
			for _, m := range conv.Messages {
				msgs = append(msgs, m.message(tc.NullAsEmpty))
			}
			opt := Options{BOS: tc.BOS, EOS: tc.EOS, AddGenerationPrompt: true, Now: feb20, Kwargs: tc.Kwargs}
			if conv.Tools {
				opt.Tools = tools
			}
			tmpl := toolTemplate(t, tc.Template)
			got, err := tmpl.Render(msgs, opt)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			checkSpans(t, tmpl, msgs, opt)
		})
	}
}

// checkSpans checks that RenderSpans finds exact spans for msgs, and that
// the spans cover every content, call name, string argument, tool name
// and description that the rendering holds (as written, trimmed or
// JSON-escaped).
func checkSpans(t *testing.T, tmpl *Template, msgs []Message, opt Options) {
	t.Helper()
	text, spans, ok, err := tmpl.RenderSpans(msgs, opt)
	if err != nil || !ok {
		t.Fatalf("RenderSpans: ok %v, err %v; want exact spans", ok, err)
	}
	covered := map[string]bool{}
	for i, sp := range spans {
		if sp.Start >= sp.End || sp.End > len(text) || (i > 0 && sp.Start < spans[i-1].End) {
			t.Fatalf("bad span %d %+v in %d bytes", i, sp, len(text))
		}
		covered[text[sp.Start:sp.End]] = true
	}
	r := &recorder{}
	if _, _, err := input(msgs, opt.Tools, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.fields {
		if f.key || f.part == partCallID || f.part == partToolCallID || f.part == partName {
			continue // keys are not located; these templates write no ids or names of messages
		}
		forms := variants(f.text)
		if !slices.ContainsFunc(forms, func(s string) bool { return strings.Contains(text, s) }) {
			continue // the template leaves it out
		}
		if !slices.ContainsFunc(forms, func(s string) bool { return s == "" || covered[s] }) { // white space may be trimmed away
			t.Errorf("%s %q is in the prompt but no span holds it", f.param(), f.text)
		}
	}
}

// TestRenderToolsInputErrors: arguments and parameters must be JSON
// objects; the error names the field as the request does.
func TestRenderToolsInputErrors(t *testing.T) {
	call := func(args string) []Message {
		return []Message{{Role: "user", Content: "hi"}, {Role: "assistant", NullContent: true, ToolCalls: []ToolCall{{ID: "a", Name: "f", Arguments: `{}`}, {ID: "b", Name: "f", Arguments: args}}}}
	}
	tests := []struct {
		name      string
		msgs      []Message
		tools     []ToolSpec
		wantParam string
	}{
		{"arguments not JSON", call(`{"a": `), nil, "messages[1].tool_calls[1].function.arguments"},
		{"arguments an array", call(`[1]`), nil, "messages[1].tool_calls[1].function.arguments"},
		{"arguments a string", call(`"x"`), nil, "messages[1].tool_calls[1].function.arguments"},
		{"parameters not an object", call(`{}`), []ToolSpec{{Name: "f"}, {Name: "g", Parameters: json.RawMessage(`null`)}}, "tools[1].function.parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ChatML().Render(tt.msgs, Options{Tools: tt.tools})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Render error %v, want an *InputError", err)
			}
			if ie.Param != tt.wantParam {
				t.Errorf("Param %q, want %q", ie.Param, tt.wantParam)
			}
		})
	}
	if _, err := ChatML().Render(call(""), Options{}); err != nil {
		t.Errorf("empty arguments (for {}): %v", err)
	}
}

// TestRenderToolsKeepsOrder: the template sees arguments and parameters
// with their keys in the order written (Python's json.loads keeps it; a Go
// map would sort them), integers as integers, nesting as written.
func TestRenderToolsKeepsOrder(t *testing.T) {
	tmpl, err := compile("{% for m in messages %}{% for c in m.tool_calls %}{% for k, v in c.function.arguments | items %}{{ k }}={{ v | tojson }};{% endfor %}{% endfor %}{% endfor %}|{{ tools | tojson }}")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "assistant", NullContent: true, ToolCalls: []ToolCall{{Name: "f", Arguments: `{"z": 1, "a": [2.5, {"y": null, "b": true}], "m": 9007199254740993}`}}}}
	got, err := tmpl.Render(msgs, Options{Tools: []ToolSpec{{Name: "f", Parameters: json.RawMessage(`{"type": "object", "properties": {"z": {}, "a": {}}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `z=1;a=[2.5, {"y": null, "b": true}];m=9007199254740993;|[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"z": {}, "a": {}}}}}]`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
