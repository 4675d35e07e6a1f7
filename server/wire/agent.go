package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// The agent fields of a request: tools and tool_choice, the response
// format, log probabilities and n, and the rules every format's spelling
// of them shares. They are turned into the engine's constraint
// (server/constraint.go) and the wire format's tool calls (toolcalls.go).

// Limits of the agent fields.
const (
	maxTools       = 128 // OpenAI's bound
	MaxChoices     = 16
	maxToolNameLen = 64
)

// toolNameRE is OpenAI's rule for function names.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Tool is one function tool a request offers.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object; nil when absent
	Strict      bool
}

// Tool choices.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	ToolChoiceNamed    = "function" // ToolChoiceName names it
)

// ResponseFormat is the request's response_format: "" or "text" (free),
// "json_object" or "json_schema" (Schema, Strict, Name).
type ResponseFormat struct {
	Type   string
	Name   string
	Schema json.RawMessage // nil: any JSON value the schema allows ({} when absent)
	Strict bool
}

// AgentFields are the decoded agent fields of a chat request.
type AgentFields struct {
	Tools          []Tool
	ToolChoice     string // auto (the default with tools), none, required or function
	ToolChoiceName string // the named function when ToolChoice is "function"
	Parallel       bool   // parallel_tool_calls (default true)
	Format         ResponseFormat
	Logprobs       bool
	TopLogprobs    int
	N              int // choices, 1..maxChoices
}

// ToolsOffered reports whether the model sees tools and its output is
// parsed for calls.
func (a *AgentFields) ToolsOffered() bool { return len(a.Tools) > 0 && a.ToolChoice != ToolChoiceNone }

// DecodeParallel reads parallel_tool_calls, and refuses a document format
// (named formatParam) beside a required or named tool choice: the output
// is either a call or a document.
func DecodeParallel(fields map[string]json.RawMessage, a *AgentFields, formatParam string) error {
	if p, err := OptionalBool(fields, "parallel_tool_calls"); err != nil {
		return err
	} else if p != nil {
		a.Parallel = *p
	}
	if a.Format.Type == "json_object" || a.Format.Type == "json_schema" {
		if a.ToolChoice == ToolChoiceRequired || a.ToolChoice == ToolChoiceNamed {
			return Invalid(formatParam, "invalid_value",
				"'%s' %s cannot be combined with tool_choice '%s': the output is either a tool call or a document", formatParam, a.Format.Type, a.ToolChoice)
		}
	}
	return nil
}

// DecodeToolList reads a tools array with one's decoder: at most
// maxTools, every name once (nameParam is where a tool's name lies
// under its item, for the error).
func DecodeToolList(raw json.RawMessage, one func(param string, raw json.RawMessage) (Tool, error), nameParam string) ([]Tool, error) {
	if IsNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, WrongType("tools", "an array", raw)
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > maxTools {
		return nil, Invalid("tools", "invalid_value", "'tools' may hold at most %d tools, got %d", maxTools, len(items))
	}
	tools := make([]Tool, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		t, err := one(fmt.Sprintf("tools[%d]", i), it)
		if err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, Invalid(fmt.Sprintf("tools[%d]%s", i, nameParam), "invalid_value", "the tool name '%s' is given twice", t.Name)
		}
		seen[t.Name] = true
		tools = append(tools, t)
	}
	return tools, nil
}

// DecodeFunction reads a function tool's fields, which chat nests under
// "function" and Responses and Messages give flat: name, description,
// strict and the JSON Schema of its arguments under schemaKey
// ("parameters", or Messages' "input_schema"). fp is the fields' param.
func DecodeFunction(fp string, fn map[string]json.RawMessage, schemaKey string) (Tool, error) {
	var t Tool
	var err error
	if t.Name, err = RequiredString(fn, "name"); err != nil {
		return Tool{}, WithParam(err, fp+".name")
	}
	if !toolNameRE.MatchString(t.Name) {
		return Tool{}, Invalid(fp+".name", "invalid_value",
			"tool names must be 1 to %d letters, digits, underscores or dashes, got '%s'", maxToolNameLen, Clip(t.Name))
	}
	if d, err := OptionalString(fn, "description"); err != nil {
		return Tool{}, WithParam(err, fp+".description")
	} else if d != nil {
		t.Description = *d
	}
	if s, err := OptionalBool(fn, "strict"); err != nil {
		return Tool{}, WithParam(err, fp+".strict")
	} else if s != nil {
		t.Strict = *s
	}
	if p := fn[schemaKey]; !IsNull(p) {
		if JSONKind(p) != "an object" {
			return Tool{}, WrongType(fp+"."+schemaKey, "a JSON Schema object", p)
		}
		t.Parameters = CompactJSON(p)
	}
	return t, nil
}

// SetToolChoice applies a tool choice given by name: none, auto or
// required (which need tools). The three APIs spell their choices
// differently and share this rule.
func SetToolChoice(a *AgentFields, param, s string) error {
	switch s {
	case ToolChoiceNone:
	case ToolChoiceAuto, ToolChoiceRequired:
		if len(a.Tools) == 0 {
			return Invalid(param, "invalid_value", "'%s' '%s' needs 'tools'", param, s)
		}
	default:
		return Invalid(param, "invalid_value", "'%s' must be none, auto, required or an object naming a function, got '%s'", param, Clip(s))
	}
	a.ToolChoice = s
	return nil
}

// NameToolChoice forces the call of the named tool, which must be among
// the request's tools; param is where the name lies.
func NameToolChoice(a *AgentFields, param, name string) error {
	if name == "" {
		return Invalid(param, "missing_required_parameter", "missing required parameter: '%s'", param)
	}
	for _, t := range a.Tools {
		if t.Name == name {
			a.ToolChoice, a.ToolChoiceName = ToolChoiceNamed, t.Name
			return nil
		}
	}
	return Invalid(param, "invalid_value", "'tool_choice' names the function '%s', which is not among 'tools'", Clip(name))
}

// DecodeFormatType reads a format object (chat's response_format,
// Responses' text.format, named param): its type, text, json_object or
// json_schema ("" when absent), and its fields.
func DecodeFormatType(param string, raw json.RawMessage) (string, map[string]json.RawMessage, error) {
	if IsNull(raw) {
		return "", nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return "", nil, WrongType(param, "an object", raw)
	}
	typ, err := RequiredString(fields, "type")
	if err != nil {
		return "", nil, WithParam(err, param+".type")
	}
	switch typ {
	case "text", "json_object", "json_schema":
		return typ, fields, nil
	}
	return "", nil, Invalid(param+".type", "invalid_value", "'%s.type' must be text, json_object or json_schema, got '%s'", param, Clip(typ))
}

// DecodeSchemaFormat reads a json_schema format's name, strict and
// schema, which chat nests under response_format.json_schema and
// Responses gives flat in text.format; param is where they lie.
func DecodeSchemaFormat(param string, js map[string]json.RawMessage) (ResponseFormat, error) {
	f := ResponseFormat{Type: "json_schema"}
	var err error
	if f.Name, err = RequiredString(js, "name"); err != nil {
		return ResponseFormat{}, WithParam(err, param+".name")
	}
	if !toolNameRE.MatchString(f.Name) {
		return ResponseFormat{}, Invalid(param+".name", "invalid_value",
			"the schema name must be 1 to 64 letters, digits, underscores or dashes")
	}
	if s, err := OptionalBool(js, "strict"); err != nil {
		return ResponseFormat{}, WithParam(err, param+".strict")
	} else if s != nil {
		f.Strict = *s
	}
	if sc := js["schema"]; !IsNull(sc) {
		if k := JSONKind(sc); k != "an object" && k != "a boolean" {
			return ResponseFormat{}, WrongType(param+".schema", "a JSON Schema object", sc)
		}
		f.Schema = CompactJSON(sc)
	}
	return f, nil
}

// CompactJSON is raw without insignificant whitespace: the key the
// grammar cache files a schema under.
func CompactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// ToolcallTools are the tools as the tool-call parser reads them.
func (a *AgentFields) ToolcallTools() []toolcall.Tool {
	out := make([]toolcall.Tool, len(a.Tools))
	for i, t := range a.Tools {
		out[i] = toolcall.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out
}
