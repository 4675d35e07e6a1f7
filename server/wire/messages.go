package wire

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DecodeMessageList reads the messages array chat and Anthropic's
// Messages require: present, an array, at least one message.
func DecodeMessageList(raw json.RawMessage) ([]json.RawMessage, error) {
	if IsNull(raw) {
		return nil, Invalid("messages", "missing_required_parameter", "missing required parameter: 'messages'")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, WrongType("messages", "an array", raw)
	}
	if len(items) == 0 {
		return nil, Invalid("messages", "empty_array", "'messages' must hold at least one message")
	}
	return items, nil
}

// Part kinds: text to join, or a part to skip.
const (
	PartText = iota + 1
	PartSkip
)

// TextParts are the content parts chat accepts.
var TextParts = map[string]int{"text": PartText}

// JoinTextParts reads a content that is a string or an array of parts
// whose type is among kinds, and joins the text parts without separator:
// chat's content, a Responses message's content or a call's output, an
// Anthropic system prompt or tool result. Any other part (an image, a
// file, audio) is a 400 naming it.
func JoinTextParts(param string, raw json.RawMessage, kinds map[string]int) (string, error) {
	if IsNull(raw) {
		return "", Invalid(param, "missing_required_parameter", "missing required parameter: '%s'", param)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", WrongType(param, "a string or an array of content parts", raw)
	}
	var b strings.Builder
	for i, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, i)
		var part map[string]json.RawMessage
		if err := json.Unmarshal(p, &part); err != nil || part == nil {
			return "", WrongType(pp, "an object", p)
		}
		typ, err := RequiredString(part, "type")
		if err != nil {
			return "", WithParam(err, pp+".type")
		}
		switch kinds[typ] {
		case PartSkip:
			continue
		case PartText:
		default:
			return "", Invalid(pp+".type", "invalid_value",
				"content parts of type '%s' are not supported: this model accepts text parts only", Clip(typ))
		}
		textRaw, ok := part["text"]
		if !ok || IsNull(textRaw) {
			return "", Invalid(pp+".text", "missing_required_parameter", "missing required parameter: '%s.text'", pp)
		}
		var text string
		if err := json.Unmarshal(textRaw, &text); err != nil {
			return "", WrongType(pp+".text", "a string", textRaw)
		}
		b.WriteString(text)
	}
	return b.String(), nil
}
