package openai

import (
	"encoding/json"

	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/server/wire"
)

// The agent fields of a chat completion: tools (nested under
// "function"), tool_choice, response_format, logprobs (a boolean with
// top_logprobs) and n, and the deprecated functions and function_call it
// refuses. The rules behind them are shared (server/wire/agent.go).

// decodeAgentFields reads tools, tool_choice, parallel_tool_calls,
// response_format, logprobs, top_logprobs and n of a chat request.
func decodeAgentFields(fields map[string]json.RawMessage) (wire.AgentFields, error) {
	a := wire.AgentFields{Parallel: true, N: 1}
	var err error
	if a.Tools, err = decodeTools(fields["tools"]); err != nil {
		return a, err
	}
	if err := rejectFunctions(fields); err != nil {
		return a, err
	}
	if err := decodeToolChoice(fields["tool_choice"], &a); err != nil {
		return a, err
	}
	if a.Format, err = decodeResponseFormat(fields["response_format"]); err != nil {
		return a, err
	}
	if err := wire.DecodeParallel(fields, &a, "response_format"); err != nil {
		return a, err
	}
	if err := decodeChatLogprobs(fields, &a); err != nil {
		return a, err
	}
	if a.N, err = decodeN(fields); err != nil {
		return a, err
	}
	return a, nil
}

// decodeN reads n, the number of choices (1..maxChoices).
func decodeN(fields map[string]json.RawMessage) (int, error) {
	n, err := wire.OptionalInt(fields, "n")
	if err != nil || n == nil {
		return 1, err
	}
	if *n < 1 || *n > wire.MaxChoices {
		return 0, wire.Invalid("n", "invalid_value", "'n' must be between 1 and %d, got %d", wire.MaxChoices, *n)
	}
	return int(*n), nil
}

// decodeChatLogprobs reads chat's logprobs (a boolean) and top_logprobs
// (0..20, which needs logprobs true, as OpenAI requires).
func decodeChatLogprobs(fields map[string]json.RawMessage, a *wire.AgentFields) error {
	lp, err := wire.OptionalBool(fields, "logprobs")
	if err != nil {
		return err
	}
	a.Logprobs = lp != nil && *lp
	top, err := wire.OptionalInt(fields, "top_logprobs")
	if err != nil || top == nil {
		return err
	}
	if *top < 0 || *top > sampling.MaxTopLogprobs {
		return wire.Invalid("top_logprobs", "invalid_value", "'top_logprobs' must be between 0 and %d, got %d", sampling.MaxTopLogprobs, *top)
	}
	if !a.Logprobs && *top > 0 {
		return wire.Invalid("top_logprobs", "invalid_value", "'top_logprobs' needs 'logprobs' set to true")
	}
	a.TopLogprobs = int(*top)
	return nil
}

// rejectFunctions refuses the deprecated functions and function_call
// fields when they ask for something: tools replaced them.
func rejectFunctions(fields map[string]json.RawMessage) error {
	if raw := fields["functions"]; !wire.IsNull(raw) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return wire.WrongType("functions", "an array", raw)
		}
		if len(items) > 0 {
			return wire.Invalid("functions", "unsupported_parameter", "'functions' is deprecated and not supported: pass them as 'tools' of type function")
		}
	}
	if raw := fields["function_call"]; !wire.IsNull(raw) {
		return wire.Invalid("function_call", "unsupported_parameter", "'function_call' is deprecated and not supported: use 'tool_choice'")
	}
	return nil
}

func decodeTools(raw json.RawMessage) ([]wire.Tool, error) {
	return wire.DecodeToolList(raw, decodeTool, ".function.name")
}

func decodeTool(param string, raw json.RawMessage) (wire.Tool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return wire.Tool{}, wire.WrongType(param, "an object", raw)
	}
	typ, err := wire.RequiredString(fields, "type")
	if err != nil {
		return wire.Tool{}, wire.WithParam(err, param+".type")
	}
	if typ != "function" {
		return wire.Tool{}, wire.Invalid(param+".type", "invalid_value", "tools of type '%s' are not supported: only 'function'", wire.Clip(typ))
	}
	fnRaw := fields["function"]
	if wire.IsNull(fnRaw) {
		return wire.Tool{}, wire.Invalid(param+".function", "missing_required_parameter", "missing required parameter: '%s.function'", param)
	}
	var fn map[string]json.RawMessage
	if err := json.Unmarshal(fnRaw, &fn); err != nil || fn == nil {
		return wire.Tool{}, wire.WrongType(param+".function", "an object", fnRaw)
	}
	return wire.DecodeFunction(param+".function", fn, "parameters")
}

func decodeToolChoice(raw json.RawMessage, a *wire.AgentFields) error {
	if wire.IsNull(raw) {
		if len(a.Tools) > 0 {
			a.ToolChoice = wire.ToolChoiceAuto
		} else {
			a.ToolChoice = wire.ToolChoiceNone
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return wire.SetToolChoice(a, "tool_choice", s)
	}
	var obj struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return wire.WrongType("tool_choice", "a string or an object naming a function", raw)
	}
	if obj.Type != "function" {
		return wire.Invalid("tool_choice.type", "invalid_value", "'tool_choice.type' must be 'function'")
	}
	if obj.Function == nil {
		return wire.NameToolChoice(a, "tool_choice.function.name", "")
	}
	return wire.NameToolChoice(a, "tool_choice.function.name", obj.Function.Name)
}

func decodeResponseFormat(raw json.RawMessage) (wire.ResponseFormat, error) {
	typ, fields, err := wire.DecodeFormatType("response_format", raw)
	if err != nil || typ != "json_schema" {
		return wire.ResponseFormat{Type: typ}, err
	}
	jsRaw := fields["json_schema"]
	if wire.IsNull(jsRaw) {
		return wire.ResponseFormat{}, wire.Invalid("response_format.json_schema", "missing_required_parameter", "missing required parameter: 'response_format.json_schema'")
	}
	var js map[string]json.RawMessage
	if err := json.Unmarshal(jsRaw, &js); err != nil || js == nil {
		return wire.ResponseFormat{}, wire.WrongType("response_format.json_schema", "an object", jsRaw)
	}
	return wire.DecodeSchemaFormat("response_format.json_schema", js)
}
