package openai

import (
	"encoding/json"
	"fmt"

	"github.com/kiln-ai/kiln/server/wire"
)

// A chat completion's messages: each has a role (developer is system),
// a content of text parts, and an assistant's tool calls or a tool
// result's call id.

// Roles the chat template accepts. "developer" is OpenAI's newer name for
// system and is mapped to it.
var roles = map[string]string{"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}

func decodeMessages(raw json.RawMessage) ([]wire.Message, error) {
	items, err := wire.DecodeMessageList(raw)
	if err != nil {
		return nil, err
	}
	msgs := make([]wire.Message, 0, len(items))
	for i, it := range items {
		param := fmt.Sprintf("messages[%d]", i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(it, &m); err != nil || m == nil {
			return nil, wire.WrongType(param, "an object", it)
		}
		roleRaw, ok := m["role"]
		if !ok || wire.IsNull(roleRaw) {
			return nil, wire.Invalid(param+".role", "missing_required_parameter", "missing required parameter: '%s.role'", param)
		}
		var role string
		if err := json.Unmarshal(roleRaw, &role); err != nil {
			return nil, wire.WrongType(param+".role", "a string", roleRaw)
		}
		mapped, ok := roles[role]
		if !ok {
			return nil, wire.Invalid(param+".role", "invalid_value",
				"invalid value for '%s.role': supported roles are system, developer, user, assistant and tool", param)
		}
		msg, err := decodeMessage(param, mapped, m)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// decodeMessage reads one message of a known role: an assistant's may
// carry tool_calls instead of content (then content may be null), a tool
// result names the call it answers (tool_call_id).
func decodeMessage(param, role string, m map[string]json.RawMessage) (wire.Message, error) {
	msg := wire.Message{Role: role}
	var err error
	if role == "assistant" {
		if msg.ToolCalls, err = decodeToolCalls(param+".tool_calls", m["tool_calls"]); err != nil {
			return msg, err
		}
	}
	if len(msg.ToolCalls) > 0 && wire.IsNull(m["content"]) {
		msg.ContentNull = true
	} else if msg.Content, err = decodeContent(param+".content", m["content"]); err != nil {
		return msg, err
	}
	if role == "tool" {
		id, err := wire.RequiredString(m, "tool_call_id")
		if err != nil {
			return msg, wire.WithParam(err, param+".tool_call_id")
		}
		msg.ToolCallID = id
	}
	if n, err := wire.OptionalString(m, "name"); err != nil {
		return msg, wire.WithParam(err, param+".name")
	} else if n != nil {
		msg.Name = *n
	}
	return msg, nil
}

// decodeToolCalls reads an assistant message's tool_calls: function calls
// whose arguments are a JSON object's text, as OpenAI sends them back.
func decodeToolCalls(param string, raw json.RawMessage) ([]wire.ToolCall, error) {
	if wire.IsNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, wire.WrongType(param, "an array", raw)
	}
	calls := make([]wire.ToolCall, 0, len(items))
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", param, i)
		var c struct {
			ID       *string `json:"id"`
			Type     *string `json:"type"`
			Function *struct {
				Name      *string          `json:"name"`
				Arguments *json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		if err := json.Unmarshal(it, &c); err != nil || wire.JSONKind(it) != "an object" {
			return nil, wire.Invalid(p, "invalid_type", "'%s' must be an object with id, type and function {name, arguments}", p)
		}
		if c.Type != nil && *c.Type != "function" {
			return nil, wire.Invalid(p+".type", "invalid_value", "tool calls of type '%s' are not supported: only 'function'", wire.Clip(*c.Type))
		}
		if c.Function == nil || c.Function.Name == nil || *c.Function.Name == "" {
			return nil, wire.Invalid(p+".function.name", "missing_required_parameter", "missing required parameter: '%s.function.name'", p)
		}
		call := wire.ToolCall{Name: *c.Function.Name, Arguments: "{}"}
		if c.ID != nil {
			call.ID = *c.ID
		}
		if a := c.Function.Arguments; a != nil && !wire.IsNull(*a) {
			var text string
			if err := json.Unmarshal(*a, &text); err != nil {
				return nil, wire.WrongType(p+".function.arguments", "a string holding a JSON object", *a)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
				return nil, wire.Invalid(p+".function.arguments", "invalid_value", "'%s.function.arguments' must be the text of a JSON object", p)
			}
			call.Arguments = text
		}
		calls = append(calls, call)
	}
	return calls, nil
}

// decodeContent accepts a string or an array of text parts
// ({"type":"text","text":"..."}), joined without separator as OpenAI does.
func decodeContent(param string, raw json.RawMessage) (string, error) {
	return wire.JoinTextParts(param, raw, wire.TextParts)
}
