package server

import (
	"encoding/json"
	"math"
	"net/http"
)

// POST /v1/messages, Anthropic's Messages API, and its count_tokens: the
// body decoded into the internal request (chatRequest), with chat's rules
// behind every field. Errors take Anthropic's shape
// ({"type":"error","error":{"type","message"}}, errors.go), for every
// route under /v1/messages.

const (
	messagesPath    = "/v1/messages"
	countTokensPath = "/v1/messages/count_tokens"
)

// anthropicMessages serves POST /v1/messages.
func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) error {
	return s.generate(w, r, func(data []byte) (*chatRequest, wire, error) {
		req, err := parseMessagesRequest(data, true)
		return req, &messagesWire{}, err
	})
}

// countTokens serves POST /v1/messages/count_tokens: the prompt's length
// under the chat template, tools included, as the generation would encode
// it.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) error {
	if err := s.inferenceAllowed(); err != nil {
		return err
	}
	data, err := requestBody(r)
	if err != nil {
		return err
	}
	req, err := parseMessagesRequest(data, false)
	if err != nil {
		return err
	}
	if err := s.checkModel(req.Model); err != nil {
		return err
	}
	ids, err := s.promptIDs(req)
	if err != nil {
		return err
	}
	return marshalJSON(w, http.StatusOK, map[string]int{"input_tokens": len(ids)})
}

func parseMessagesRequest(data []byte, generate bool) (*chatRequest, error) {
	fields, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	req := &chatRequest{api: apiMessages}
	if req.Model, err = requiredString(fields, "model"); err != nil {
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
	if req.TemplateKwargs, err = decodeTemplateKwargs(fields["chat_template_kwargs"]); err != nil {
		return nil, err
	}
	return req, decodeThinking(fields["thinking"], req)
}

// decodeThinking reads thinking: {"type":"enabled"} (its budget_tokens
// is not enforced: the template's thinking section ends when the model
// ends it) or {"type":"disabled"}, as the template's enable_thinking;
// adaptive leaves the template's default.
func decodeThinking(raw json.RawMessage, req *chatRequest) error {
	if isNull(raw) {
		return nil
	}
	var t map[string]json.RawMessage
	if err := json.Unmarshal(raw, &t); err != nil || t == nil {
		return wrongType("thinking", "an object", raw)
	}
	typ, err := requiredString(t, "type")
	if err != nil {
		return withParam(err, "thinking.type")
	}
	switch typ {
	case "enabled", "disabled":
		req.setThinking(typ == "enabled")
	case "adaptive":
	default:
		return invalid("thinking.type", "invalid_value", "'thinking.type' must be enabled, disabled or adaptive, got '%s'", clip(typ))
	}
	return nil
}

// decodeSystem reads system: a string or text blocks, as one system
// message (none when absent).
func decodeSystem(raw json.RawMessage) ([]chatMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	text, err := decodeTextBlocks("system", raw)
	if err != nil {
		return nil, err
	}
	return []chatMessage{{Role: "system", Content: text}}, nil
}

// decodeMessagesOptions reads max_tokens (required, as Anthropic requires
// it), sampling, stop_sequences, stream, include_performance and the
// adapter.
func decodeMessagesOptions(fields map[string]json.RawMessage, req *chatRequest) error {
	v, err := optionalInt(fields, "max_tokens")
	if err != nil {
		return err
	}
	if v == nil {
		return invalid("max_tokens", "missing_required_parameter", "missing required parameter: 'max_tokens'")
	}
	if *v < 1 {
		return invalid("max_tokens", "invalid_value", "'max_tokens' must be at least 1, got %d", *v)
	}
	req.MaxTokens = int(min(*v, math.MaxInt32))
	if err := decodeSampling(fields, req); err != nil {
		return err
	}
	if req.Stop, err = decodeStopSequences(fields["stop_sequences"]); err != nil {
		return err
	}
	if err := decodeStreaming(fields, req); err != nil {
		return err
	}
	return decodeAdapter(fields, req)
}

// decodeStopSequences reads stop_sequences with the rules of chat's stop.
func decodeStopSequences(raw json.RawMessage) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	if jsonKind(raw) != "an array" {
		return nil, wrongType("stop_sequences", "an array of strings", raw)
	}
	return decodeStop("stop_sequences", raw)
}

// decodeMessagesAgent reads tools and tool_choice.
func decodeMessagesAgent(fields map[string]json.RawMessage) (agentFields, error) {
	a := agentFields{Parallel: true, N: 1}
	var err error
	if a.Tools, err = decodeToolList(fields["tools"], decodeAnthropicTool, ".name"); err != nil {
		return a, err
	}
	return a, decodeAnthropicToolChoice(fields["tool_choice"], &a)
}

// decodeAnthropicTool reads one client tool: name, description and
// input_schema.
func decodeAnthropicTool(param string, raw json.RawMessage) (tool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return tool{}, wrongType(param, "an object", raw)
	}
	if typ, err := optionalString(fields, "type"); err != nil {
		return tool{}, withParam(err, param+".type")
	} else if typ != nil && *typ != "custom" {
		return tool{}, invalid(param+".type", "invalid_value",
			"tools of type '%s' are not supported: this server runs no server tools, only client tools (type custom or absent)", clip(*typ))
	}
	if isNull(fields["input_schema"]) {
		return tool{}, invalid(param+".input_schema", "missing_required_parameter", "missing required parameter: '%s.input_schema'", param)
	}
	return decodeFunction(param, fields, "input_schema")
}

// decodeAnthropicToolChoice reads {"type": auto|any|tool|none, "name",
// "disable_parallel_tool_use"}: any is chat's required, tool a named one.
func decodeAnthropicToolChoice(raw json.RawMessage, a *agentFields) error {
	a.ToolChoice = toolChoiceNone
	if len(a.Tools) > 0 {
		a.ToolChoice = toolChoiceAuto
	}
	if isNull(raw) {
		return nil
	}
	var c struct {
		Type         *string `json:"type"`
		Name         string  `json:"name"`
		DisableParal *bool   `json:"disable_parallel_tool_use"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || jsonKind(raw) != "an object" {
		return wrongType("tool_choice", "an object with a type", raw)
	}
	if c.Type == nil {
		return invalid("tool_choice.type", "missing_required_parameter", "missing required parameter: 'tool_choice.type'")
	}
	if c.DisableParal != nil {
		a.Parallel = !*c.DisableParal
	}
	switch *c.Type {
	case "auto", "none":
		return setToolChoice(a, "tool_choice.type", *c.Type)
	case "any":
		return setToolChoice(a, "tool_choice.type", toolChoiceRequired)
	case "tool":
		return nameToolChoice(a, "tool_choice.name", c.Name)
	}
	return invalid("tool_choice.type", "invalid_value", "'tool_choice.type' must be auto, any, tool or none, got '%s'", clip(*c.Type))
}
