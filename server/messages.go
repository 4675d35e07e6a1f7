package server

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Roles the chat template accepts. "developer" is OpenAI's newer name for
// system and is mapped to it.
var roles = map[string]string{"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}

func decodeMessages(raw json.RawMessage) ([]chatMessage, error) {
	if isNull(raw) {
		return nil, invalid("messages", "missing_required_parameter", "missing required parameter: 'messages'")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, wrongType("messages", "an array", raw)
	}
	if len(items) == 0 {
		return nil, invalid("messages", "empty_array", "'messages' must hold at least one message")
	}
	msgs := make([]chatMessage, 0, len(items))
	for i, it := range items {
		param := fmt.Sprintf("messages[%d]", i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(it, &m); err != nil || m == nil {
			return nil, wrongType(param, "an object", it)
		}
		roleRaw, ok := m["role"]
		if !ok || isNull(roleRaw) {
			return nil, invalid(param+".role", "missing_required_parameter", "missing required parameter: '%s.role'", param)
		}
		var role string
		if err := json.Unmarshal(roleRaw, &role); err != nil {
			return nil, wrongType(param+".role", "a string", roleRaw)
		}
		mapped, ok := roles[role]
		if !ok {
			return nil, invalid(param+".role", "invalid_value",
				"invalid value for '%s.role': supported roles are system, developer, user and assistant", param)
		}
		content, err := decodeContent(param+".content", m["content"])
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, chatMessage{Role: mapped, Content: content})
	}
	return msgs, nil
}

// decodeContent accepts a string or an array of text parts
// ({"type":"text","text":"..."}), joined without separator as OpenAI does.
func decodeContent(param string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", invalid(param, "missing_required_parameter", "missing required parameter: '%s'", param)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", wrongType(param, "a string or an array of content parts", raw)
	}
	var b strings.Builder
	for i, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, i)
		var part map[string]json.RawMessage
		if err := json.Unmarshal(p, &part); err != nil || part == nil {
			return "", wrongType(pp, "an object", p)
		}
		typ, err := requiredString(part, "type")
		if err != nil {
			return "", withParam(err, pp+".type")
		}
		if typ != "text" {
			return "", invalid(pp+".type", "invalid_value",
				"content parts of type '%s' are not supported: this model accepts text parts only", clip(typ))
		}
		textRaw, ok := part["text"]
		if !ok || isNull(textRaw) {
			return "", invalid(pp+".text", "missing_required_parameter", "missing required parameter: '%s.text'", pp)
		}
		var text string
		if err := json.Unmarshal(textRaw, &text); err != nil {
			return "", wrongType(pp+".text", "a string", textRaw)
		}
		b.WriteString(text)
	}
	return b.String(), nil
}
