package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/kiln-ai/kiln/engine/toolcall"
)

// The agent fields of a chat request: tools and tool_choice, the response
// format, log probabilities and n. They are decoded here and turned into
// the engine's constraint (constraint.go) and the wire format's tool calls
// (toolstream.go).

// Limits of the agent fields.
const (
	maxTools       = 128 // OpenAI's bound
	maxChoices     = 16
	maxToolNameLen = 64
)

// toolNameRE is OpenAI's rule for function names.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// tool is one function tool a request offers.
type tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object; nil when absent
	Strict      bool
}

// Tool choices.
const (
	toolChoiceAuto     = "auto"
	toolChoiceNone     = "none"
	toolChoiceRequired = "required"
	toolChoiceNamed    = "function" // ToolChoiceName names it
)

// responseFormat is the request's response_format: "" or "text" (free),
// "json_object" or "json_schema" (Schema, Strict, Name).
type responseFormat struct {
	Type   string
	Name   string
	Schema json.RawMessage // nil: any JSON value the schema allows ({} when absent)
	Strict bool
}

// agentFields are the decoded agent fields of a chat request.
type agentFields struct {
	Tools          []tool
	ToolChoice     string // auto (the default with tools), none, required or function
	ToolChoiceName string // the named function when ToolChoice is "function"
	Parallel       bool   // parallel_tool_calls (default true)
	Format         responseFormat
	Logprobs       bool
	TopLogprobs    int
	N              int // choices, 1..maxChoices
}

// toolsOffered reports whether the model sees tools and its output is
// parsed for calls.
func (a *agentFields) toolsOffered() bool { return len(a.Tools) > 0 && a.ToolChoice != toolChoiceNone }

// decodeParallel reads parallel_tool_calls, and refuses a document format
// (named formatParam) beside a required or named tool choice: the output
// is either a call or a document.
func decodeParallel(fields map[string]json.RawMessage, a *agentFields, formatParam string) error {
	if p, err := optionalBool(fields, "parallel_tool_calls"); err != nil {
		return err
	} else if p != nil {
		a.Parallel = *p
	}
	if a.Format.Type == "json_object" || a.Format.Type == "json_schema" {
		if a.ToolChoice == toolChoiceRequired || a.ToolChoice == toolChoiceNamed {
			return invalid(formatParam, "invalid_value",
				"'%s' %s cannot be combined with tool_choice '%s': the output is either a tool call or a document", formatParam, a.Format.Type, a.ToolChoice)
		}
	}
	return nil
}

// decodeToolList reads a tools array with one's decoder: at most
// maxTools, every name once (nameParam is where a tool's name lies
// under its item, for the error).
func decodeToolList(raw json.RawMessage, one func(param string, raw json.RawMessage) (tool, error), nameParam string) ([]tool, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, wrongType("tools", "an array", raw)
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > maxTools {
		return nil, invalid("tools", "invalid_value", "'tools' may hold at most %d tools, got %d", maxTools, len(items))
	}
	tools := make([]tool, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		t, err := one(fmt.Sprintf("tools[%d]", i), it)
		if err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, invalid(fmt.Sprintf("tools[%d]%s", i, nameParam), "invalid_value", "the tool name '%s' is given twice", t.Name)
		}
		seen[t.Name] = true
		tools = append(tools, t)
	}
	return tools, nil
}

// decodeFunction reads a function tool's fields, which chat nests under
// "function" and Responses and Messages give flat: name, description,
// strict and the JSON Schema of its arguments under schemaKey
// ("parameters", or Messages' "input_schema"). fp is the fields' param.
func decodeFunction(fp string, fn map[string]json.RawMessage, schemaKey string) (tool, error) {
	var t tool
	var err error
	if t.Name, err = requiredString(fn, "name"); err != nil {
		return tool{}, withParam(err, fp+".name")
	}
	if !toolNameRE.MatchString(t.Name) {
		return tool{}, invalid(fp+".name", "invalid_value",
			"tool names must be 1 to %d letters, digits, underscores or dashes, got '%s'", maxToolNameLen, clip(t.Name))
	}
	if d, err := optionalString(fn, "description"); err != nil {
		return tool{}, withParam(err, fp+".description")
	} else if d != nil {
		t.Description = *d
	}
	if s, err := optionalBool(fn, "strict"); err != nil {
		return tool{}, withParam(err, fp+".strict")
	} else if s != nil {
		t.Strict = *s
	}
	if p := fn[schemaKey]; !isNull(p) {
		if jsonKind(p) != "an object" {
			return tool{}, wrongType(fp+"."+schemaKey, "a JSON Schema object", p)
		}
		t.Parameters = compactJSON(p)
	}
	return t, nil
}

// setToolChoice applies a tool choice given by name: none, auto or
// required (which need tools). The three APIs spell their choices
// differently and share this rule.
func setToolChoice(a *agentFields, param, s string) error {
	switch s {
	case toolChoiceNone:
	case toolChoiceAuto, toolChoiceRequired:
		if len(a.Tools) == 0 {
			return invalid(param, "invalid_value", "'%s' '%s' needs 'tools'", param, s)
		}
	default:
		return invalid(param, "invalid_value", "'%s' must be none, auto, required or an object naming a function, got '%s'", param, clip(s))
	}
	a.ToolChoice = s
	return nil
}

// nameToolChoice forces the call of the named tool, which must be among
// the request's tools; param is where the name lies.
func nameToolChoice(a *agentFields, param, name string) error {
	if name == "" {
		return invalid(param, "missing_required_parameter", "missing required parameter: '%s'", param)
	}
	for _, t := range a.Tools {
		if t.Name == name {
			a.ToolChoice, a.ToolChoiceName = toolChoiceNamed, t.Name
			return nil
		}
	}
	return invalid(param, "invalid_value", "'tool_choice' names the function '%s', which is not among 'tools'", clip(name))
}

// decodeFormatType reads a format object (chat's response_format,
// Responses' text.format, named param): its type, text, json_object or
// json_schema ("" when absent), and its fields.
func decodeFormatType(param string, raw json.RawMessage) (string, map[string]json.RawMessage, error) {
	if isNull(raw) {
		return "", nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return "", nil, wrongType(param, "an object", raw)
	}
	typ, err := requiredString(fields, "type")
	if err != nil {
		return "", nil, withParam(err, param+".type")
	}
	switch typ {
	case "text", "json_object", "json_schema":
		return typ, fields, nil
	}
	return "", nil, invalid(param+".type", "invalid_value", "'%s.type' must be text, json_object or json_schema, got '%s'", param, clip(typ))
}

// decodeSchemaFormat reads a json_schema format's name, strict and
// schema, which chat nests under response_format.json_schema and
// Responses gives flat in text.format; param is where they lie.
func decodeSchemaFormat(param string, js map[string]json.RawMessage) (responseFormat, error) {
	f := responseFormat{Type: "json_schema"}
	var err error
	if f.Name, err = requiredString(js, "name"); err != nil {
		return responseFormat{}, withParam(err, param+".name")
	}
	if !toolNameRE.MatchString(f.Name) {
		return responseFormat{}, invalid(param+".name", "invalid_value",
			"the schema name must be 1 to 64 letters, digits, underscores or dashes")
	}
	if s, err := optionalBool(js, "strict"); err != nil {
		return responseFormat{}, withParam(err, param+".strict")
	} else if s != nil {
		f.Strict = *s
	}
	if sc := js["schema"]; !isNull(sc) {
		if k := jsonKind(sc); k != "an object" && k != "a boolean" {
			return responseFormat{}, wrongType(param+".schema", "a JSON Schema object", sc)
		}
		f.Schema = compactJSON(sc)
	}
	return f, nil
}

// compactJSON is raw without insignificant whitespace: the key the
// grammar cache files a schema under.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// toolcallTools are the tools as the tool-call parser reads them.
func (a *agentFields) toolcallTools() []toolcall.Tool {
	out := make([]toolcall.Tool, len(a.Tools))
	for i, t := range a.Tools {
		out[i] = toolcall.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out
}
