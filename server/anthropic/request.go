package anthropic

import (
	"encoding/json"
	"math"

	"github.com/kiln-ai/kiln/server/wire"
)

// POST /v1/messages, Anthropic's Messages API, and its count_tokens: the
// body decoded into the internal request (wire.Request), with chat's rules
// behind every field. Errors take Anthropic's shape
// ({"type":"error","error":{"type","message"}}, errors.go), for every
// route under /v1/messages.

// The Messages routes: a generation, and the count of a prompt's tokens.
const (
	MessagesPath    = "/v1/messages"
	CountTokensPath = "/v1/messages/count_tokens"
)

// Parse decodes a Messages body into the internal request.
func Parse(data []byte) (*wire.Request, error) { return parseMessagesRequest(data, true) }

// ParseCountTokens decodes a count_tokens body: a Messages body without
// the generation's options (max_tokens, sampling, stream).
func ParseCountTokens(data []byte) (*wire.Request, error) { return parseMessagesRequest(data, false) }

func parseMessagesRequest(data []byte, generate bool) (*wire.Request, error) {
	fields, err := wire.DecodeObject(data)
	if err != nil {
		return nil, err
	}
	req := &wire.Request{API: wire.APIMessages}
	if req.Model, err = wire.RequiredString(fields, "model"); err != nil {
		return nil, err
	}
	if req.Messages, err = decodeSystem(fields["system"]); err != nil {
		return nil, err
	}
	msgs, err := decodeAnthropicMessages(fields["messages"])
	if err != nil {
		return nil, err
	}
	req.Messages = append(req.Messages, msgs...)
	if generate {
		if err := decodeMessagesOptions(fields, req); err != nil {
			return nil, err
		}
	}
	if req.Agent, err = decodeMessagesAgent(fields); err != nil {
		return nil, err
	}
	if req.TemplateKwargs, err = wire.DecodeTemplateKwargs(fields["chat_template_kwargs"]); err != nil {
		return nil, err
	}
	return req, decodeThinking(fields["thinking"], req)
}

// decodeThinking reads thinking: {"type":"enabled"} (its budget_tokens
// is not enforced: the template's thinking section ends when the model
// ends it) or {"type":"disabled"}, as the template's enable_thinking;
// adaptive leaves the template's default.
func decodeThinking(raw json.RawMessage, req *wire.Request) error {
	if wire.IsNull(raw) {
		return nil
	}
	var t map[string]json.RawMessage
	if err := json.Unmarshal(raw, &t); err != nil || t == nil {
		return wire.WrongType("thinking", "an object", raw)
	}
	typ, err := wire.RequiredString(t, "type")
	if err != nil {
		return wire.WithParam(err, "thinking.type")
	}
	switch typ {
	case "enabled", "disabled":
		req.SetThinking(typ == "enabled")
	case "adaptive":
	default:
		return wire.Invalid("thinking.type", "invalid_value", "'thinking.type' must be enabled, disabled or adaptive, got '%s'", wire.Clip(typ))
	}
	return nil
}

// decodeSystem reads system: a string or text blocks, as one system
// message (none when absent).
func decodeSystem(raw json.RawMessage) ([]wire.Message, error) {
	if wire.IsNull(raw) {
		return nil, nil
	}
	text, err := decodeTextBlocks("system", raw)
	if err != nil {
		return nil, err
	}
	return []wire.Message{{Role: "system", Content: text}}, nil
}

// decodeMessagesOptions reads max_tokens (required, as Anthropic requires
// it), sampling, stop_sequences, stream, include_performance and the
// adapter.
func decodeMessagesOptions(fields map[string]json.RawMessage, req *wire.Request) error {
	v, err := wire.OptionalInt(fields, "max_tokens")
	if err != nil {
		return err
	}
	if v == nil {
		return wire.Invalid("max_tokens", "missing_required_parameter", "missing required parameter: 'max_tokens'")
	}
	if *v < 1 {
		return wire.Invalid("max_tokens", "invalid_value", "'max_tokens' must be at least 1, got %d", *v)
	}
	req.MaxTokens = int(min(*v, math.MaxInt32))
	if err := wire.DecodeGeneration(fields, req, "stop_sequences", true); err != nil {
		return err
	}
	return wire.DecodeAdapter(fields, req)
}

// decodeMessagesAgent reads tools and tool_choice.
func decodeMessagesAgent(fields map[string]json.RawMessage) (wire.AgentFields, error) {
	a := wire.AgentFields{Parallel: true, N: 1}
	var err error
	if a.Tools, err = wire.DecodeToolList(fields["tools"], decodeAnthropicTool, ".name"); err != nil {
		return a, err
	}
	return a, decodeAnthropicToolChoice(fields["tool_choice"], &a)
}

// decodeAnthropicTool reads one client tool: name, description and
// input_schema.
func decodeAnthropicTool(param string, raw json.RawMessage) (wire.Tool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return wire.Tool{}, wire.WrongType(param, "an object", raw)
	}
	if typ, err := wire.OptionalString(fields, "type"); err != nil {
		return wire.Tool{}, wire.WithParam(err, param+".type")
	} else if typ != nil && *typ != "custom" {
		return wire.Tool{}, wire.Invalid(param+".type", "invalid_value",
			"tools of type '%s' are not supported: this server runs no server tools, only client tools (type custom or absent)", wire.Clip(*typ))
	}
	if wire.IsNull(fields["input_schema"]) {
		return wire.Tool{}, wire.Invalid(param+".input_schema", "missing_required_parameter", "missing required parameter: '%s.input_schema'", param)
	}
	return wire.DecodeFunction(param, fields, "input_schema")
}

// decodeAnthropicToolChoice reads {"type": auto|any|tool|none, "name",
// "disable_parallel_tool_use"}: any is chat's required, tool a named one.
func decodeAnthropicToolChoice(raw json.RawMessage, a *wire.AgentFields) error {
	a.ToolChoice = wire.ToolChoiceNone
	if len(a.Tools) > 0 {
		a.ToolChoice = wire.ToolChoiceAuto
	}
	if wire.IsNull(raw) {
		return nil
	}
	var c struct {
		Type         *string `json:"type"`
		Name         string  `json:"name"`
		DisableParal *bool   `json:"disable_parallel_tool_use"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || wire.JSONKind(raw) != "an object" {
		return wire.WrongType("tool_choice", "an object with a type", raw)
	}
	if c.Type == nil {
		return wire.Invalid("tool_choice.type", "missing_required_parameter", "missing required parameter: 'tool_choice.type'")
	}
	if c.DisableParal != nil {
		a.Parallel = !*c.DisableParal
	}
	switch *c.Type {
	case "auto", "none":
		return wire.SetToolChoice(a, "tool_choice.type", *c.Type)
	case "any":
		return wire.SetToolChoice(a, "tool_choice.type", wire.ToolChoiceRequired)
	case "tool":
		return wire.NameToolChoice(a, "tool_choice.name", c.Name)
	}
	return wire.Invalid("tool_choice.type", "invalid_value", "'tool_choice.type' must be auto, any, tool or none, got '%s'", wire.Clip(*c.Type))
}
