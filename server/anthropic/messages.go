package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kiln-ai/kiln/server/wire"
)

// A Messages request's messages: user and assistant turns whose content
// is a string or content blocks. An assistant's text and tool_use blocks
// become one assistant message with tool calls; a user's tool_result
// blocks become tool messages naming the call they answer, before the
// text of the same turn.

func decodeAnthropicMessages(raw json.RawMessage) ([]wire.Message, error) {
	items, err := wire.DecodeMessageList(raw)
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // tool_use id → name
	var msgs []wire.Message
	for i, it := range items {
		param := fmt.Sprintf("messages[%d]", i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(it, &m); err != nil || m == nil {
			return nil, wire.WrongType(param, "an object", it)
		}
		role, err := wire.RequiredString(m, "role")
		if err != nil {
			return nil, wire.WithParam(err, param+".role")
		}
		if role != "user" && role != "assistant" {
			return nil, wire.Invalid(param+".role", "invalid_value",
				"invalid value for '%s.role': supported roles are user and assistant (the system prompt is the top-level 'system')", param)
		}
		turn, err := decodeTurn(param+".content", role, m["content"], names)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, turn...)
	}
	return msgs, nil
}

// block is one content block as the decoder reads it.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// decodeTurn reads one turn's content into its messages.
func decodeTurn(param, role string, raw json.RawMessage, names map[string]string) ([]wire.Message, error) {
	if wire.IsNull(raw) {
		return nil, wire.Invalid(param, "missing_required_parameter", "missing required parameter: '%s'", param)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []wire.Message{{Role: role, Content: s}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, wire.WrongType(param, "a string or an array of content blocks", raw)
	}
	var text strings.Builder
	var calls []wire.ToolCall
	var results []wire.Message
	for i, it := range items {
		bp := fmt.Sprintf("%s[%d]", param, i)
		var b block
		if err := json.Unmarshal(it, &b); err != nil || wire.JSONKind(it) != "an object" {
			return nil, wire.WrongType(bp, "a content block object", it)
		}
		switch {
		case b.Type == "text":
			if b.Text == nil {
				return nil, wire.Invalid(bp+".text", "missing_required_parameter", "missing required parameter: '%s.text'", bp)
			}
			text.WriteString(*b.Text)
		case b.Type == "tool_use" && role == "assistant":
			c, err := decodeToolUse(bp, &b)
			if err != nil {
				return nil, err
			}
			names[c.ID] = c.Name
			calls = append(calls, c)
		case b.Type == "tool_result" && role == "user":
			if b.ToolUseID == "" {
				return nil, wire.Invalid(bp+".tool_use_id", "missing_required_parameter", "missing required parameter: '%s.tool_use_id'", bp)
			}
			out := ""
			if !wire.IsNull(b.Content) {
				var err error
				if out, err = decodeTextBlocks(bp+".content", b.Content); err != nil {
					return nil, err
				}
			}
			if b.IsError {
				out = "Error: " + out
			}
			results = append(results, wire.Message{Role: "tool", Content: out, ToolCallID: b.ToolUseID, Name: names[b.ToolUseID]})
		case b.Type == "thinking" || b.Type == "redacted_thinking":
			// Earlier turns' thinking: the chat template drops it.
		default:
			return nil, wire.Invalid(bp+".type", "invalid_value",
				"content blocks of type '%s' are not supported in a %s turn: this model takes text%s", wire.Clip(b.Type), role, blockKinds(role))
		}
	}
	msgs := results
	if role == "assistant" {
		m := wire.Message{Role: role, Content: text.String(), ToolCalls: calls}
		m.ContentNull = m.Content == "" && len(calls) > 0
		return append(msgs, m), nil
	}
	if text.Len() > 0 || len(results) == 0 {
		msgs = append(msgs, wire.Message{Role: role, Content: text.String()})
	}
	return msgs, nil
}

func blockKinds(role string) string {
	if role == "assistant" {
		return " and tool_use blocks"
	}
	return " and tool_result blocks"
}

// decodeToolUse reads an assistant's tool_use block: id, name and the
// input object.
func decodeToolUse(bp string, b *block) (wire.ToolCall, error) {
	if b.ID == "" {
		return wire.ToolCall{}, wire.Invalid(bp+".id", "missing_required_parameter", "missing required parameter: '%s.id'", bp)
	}
	if b.Name == "" {
		return wire.ToolCall{}, wire.Invalid(bp+".name", "missing_required_parameter", "missing required parameter: '%s.name'", bp)
	}
	if wire.JSONKind(b.Input) != "an object" {
		return wire.ToolCall{}, wire.WrongType(bp+".input", "an object", b.Input)
	}
	return wire.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(wire.CompactJSON(b.Input))}, nil
}

// decodeTextBlocks reads a string or text blocks, joined without
// separator: system, and a tool_result's content.
func decodeTextBlocks(param string, raw json.RawMessage) (string, error) {
	return wire.JoinTextParts(param, raw, wire.TextParts)
}
