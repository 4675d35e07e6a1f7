package server

import (
	"encoding/json"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// The agent fields of a chat completion: tools (nested under
// "function"), tool_choice, response_format, logprobs (a boolean with
// top_logprobs) and n, and the deprecated functions and function_call it
// refuses. The rules behind them are shared (agent_request.go).

// decodeAgentFields reads tools, tool_choice, parallel_tool_calls,
// response_format, logprobs, top_logprobs and n of a chat request.
func decodeAgentFields(fields map[string]json.RawMessage) (agentFields, error) {
	a := agentFields{Parallel: true, N: 1}
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
	if err := decodeParallel(fields, &a, "response_format"); err != nil {
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
	n, err := optionalInt(fields, "n")
	if err != nil || n == nil {
		return 1, err
	}
	if *n < 1 || *n > maxChoices {
		return 0, invalid("n", "invalid_value", "'n' must be between 1 and %d, got %d", maxChoices, *n)
	}
	return int(*n), nil
}

// decodeChatLogprobs reads chat's logprobs (a boolean) and top_logprobs
// (0..20, which needs logprobs true, as OpenAI requires).
func decodeChatLogprobs(fields map[string]json.RawMessage, a *agentFields) error {
	lp, err := optionalBool(fields, "logprobs")
	if err != nil {
		return err
	}
	a.Logprobs = lp != nil && *lp
	top, err := optionalInt(fields, "top_logprobs")
	if err != nil || top == nil {
		return err
	}
	if *top < 0 || *top > sampling.MaxTopLogprobs {
		return invalid("top_logprobs", "invalid_value", "'top_logprobs' must be between 0 and %d, got %d", sampling.MaxTopLogprobs, *top)
	}
	if !a.Logprobs && *top > 0 {
		return invalid("top_logprobs", "invalid_value", "'top_logprobs' needs 'logprobs' set to true")
	}
	a.TopLogprobs = int(*top)
	return nil
}

// rejectFunctions refuses the deprecated functions and function_call
// fields when they ask for something: tools replaced them.
func rejectFunctions(fields map[string]json.RawMessage) error {
	if raw := fields["functions"]; !isNull(raw) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return wrongType("functions", "an array", raw)
		}
		if len(items) > 0 {
			return invalid("functions", "unsupported_parameter", "'functions' is deprecated and not supported: pass them as 'tools' of type function")
		}
	}
	if raw := fields["function_call"]; !isNull(raw) {
		return invalid("function_call", "unsupported_parameter", "'function_call' is deprecated and not supported: use 'tool_choice'")
	}
	return nil
}

func decodeTools(raw json.RawMessage) ([]tool, error) {
	return decodeToolList(raw, decodeTool, ".function.name")
}

func decodeTool(param string, raw json.RawMessage) (tool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return tool{}, wrongType(param, "an object", raw)
	}
	typ, err := requiredString(fields, "type")
	if err != nil {
		return tool{}, withParam(err, param+".type")
	}
	if typ != "function" {
		return tool{}, invalid(param+".type", "invalid_value", "tools of type '%s' are not supported: only 'function'", clip(typ))
	}
	fnRaw := fields["function"]
	if isNull(fnRaw) {
		return tool{}, invalid(param+".function", "missing_required_parameter", "missing required parameter: '%s.function'", param)
	}
	var fn map[string]json.RawMessage
	if err := json.Unmarshal(fnRaw, &fn); err != nil || fn == nil {
		return tool{}, wrongType(param+".function", "an object", fnRaw)
	}
	return decodeFunction(param+".function", fn, "parameters")
}

func decodeToolChoice(raw json.RawMessage, a *agentFields) error {
	if isNull(raw) {
		if len(a.Tools) > 0 {
			a.ToolChoice = toolChoiceAuto
		} else {
			a.ToolChoice = toolChoiceNone
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return setToolChoice(a, "tool_choice", s)
	}
	var obj struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return wrongType("tool_choice", "a string or an object naming a function", raw)
	}
	if obj.Type != "function" {
		return invalid("tool_choice.type", "invalid_value", "'tool_choice.type' must be 'function'")
	}
	if obj.Function == nil {
		return nameToolChoice(a, "tool_choice.function.name", "")
	}
	return nameToolChoice(a, "tool_choice.function.name", obj.Function.Name)
}

func decodeResponseFormat(raw json.RawMessage) (responseFormat, error) {
	typ, fields, err := decodeFormatType("response_format", raw)
	if err != nil || typ != "json_schema" {
		return responseFormat{Type: typ}, err
	}
	jsRaw := fields["json_schema"]
	if isNull(jsRaw) {
		return responseFormat{}, invalid("response_format.json_schema", "missing_required_parameter", "missing required parameter: 'response_format.json_schema'")
	}
	var js map[string]json.RawMessage
	if err := json.Unmarshal(jsRaw, &js); err != nil || js == nil {
		return responseFormat{}, wrongType("response_format.json_schema", "an object", jsRaw)
	}
	return decodeSchemaFormat("response_format.json_schema", js)
}
