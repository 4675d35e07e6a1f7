package responses

import (
	"encoding/json"
	"fmt"

	"github.com/kiln-ai/kiln/server/wire"
)

// A Responses request's input: a string (one user message) or a list of
// items, turned into the internal messages. Consecutive function_call
// items (and the assistant message before them) become one assistant
// message with tool calls, as the chat template expects; a
// function_call_output is a tool message naming the call it answers.

// responsesRoles are the roles a message item may have.
var responsesRoles = map[string]string{"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}

func decodeResponsesInput(raw json.RawMessage, st *Store) ([]wire.Message, error) {
	if wire.IsNull(raw) {
		return nil, wire.Invalid("input", "missing_required_parameter", "missing required parameter: 'input'")
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []wire.Message{{Role: "user", Content: one}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, wire.WrongType("input", "a string or an array of input items", raw)
	}
	if len(items) == 0 {
		return nil, wire.Invalid("input", "empty_array", "'input' must hold at least one item")
	}
	d := inputDecoder{st: st, names: map[string]string{}}
	for i, it := range items {
		if err := d.item(fmt.Sprintf("input[%d]", i), it); err != nil {
			return nil, err
		}
	}
	return d.msgs, nil
}

// inputDecoder builds the messages item by item.
type inputDecoder struct {
	st    *Store
	msgs  []wire.Message
	names map[string]string // call_id → function name, for the tool messages
}

func (d *inputDecoder) item(param string, raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return wire.WrongType(param, "an object", raw)
	}
	typ := "message"
	if t, err := wire.OptionalString(m, "type"); err != nil {
		return wire.WithParam(err, param+".type")
	} else if t != nil {
		typ = *t
	}
	switch typ {
	case "message":
		return d.message(param, m)
	case "function_call":
		return d.functionCall(param, m)
	case "function_call_output":
		return d.callOutput(param, m)
	case "item_reference":
		id, err := wire.RequiredString(m, "id")
		if err != nil {
			return wire.WithParam(err, param+".id")
		}
		msgs, ok := d.st.item(id)
		if !ok {
			return &wire.Error{Status: 404, Type: wire.TypeInvalidRequest, Param: param + ".id", Code: "not_found",
				Message: fmt.Sprintf("the item '%s' was not found: it was never stored (store: false), or its response has expired", wire.Clip(id))}
		}
		for _, msg := range msgs {
			d.add(msg)
		}
		return nil
	case "reasoning":
		return nil // this server keeps no reasoning between turns: the template drops it
	}
	return wire.Invalid(param+".type", "invalid_value",
		"input items of type '%s' are not supported: only message, function_call, function_call_output, item_reference and reasoning", wire.Clip(typ))
}

func (d *inputDecoder) message(param string, m map[string]json.RawMessage) error {
	role, err := wire.RequiredString(m, "role")
	if err != nil {
		return wire.WithParam(err, param+".role")
	}
	mapped, ok := responsesRoles[role]
	if !ok {
		return wire.Invalid(param+".role", "invalid_value", "invalid value for '%s.role': supported roles are user, system, developer and assistant", param)
	}
	text, err := decodeInputContent(param+".content", m["content"])
	if err != nil {
		return err
	}
	d.add(wire.Message{Role: mapped, Content: text})
	return nil
}

func (d *inputDecoder) functionCall(param string, m map[string]json.RawMessage) error {
	var c wire.ToolCall
	var err error
	if c.ID, err = wire.RequiredString(m, "call_id"); err != nil {
		return wire.WithParam(err, param+".call_id")
	}
	if c.Name, err = wire.RequiredString(m, "name"); err != nil {
		return wire.WithParam(err, param+".name")
	}
	if c.Arguments, err = wire.RequiredString(m, "arguments"); err != nil {
		return wire.WithParam(err, param+".arguments")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(c.Arguments), &obj); err != nil || obj == nil {
		return wire.Invalid(param+".arguments", "invalid_value", "'%s.arguments' must be the text of a JSON object", param)
	}
	d.names[c.ID] = c.Name
	d.add(wire.Message{Role: "assistant", ContentNull: true, ToolCalls: []wire.ToolCall{c}})
	return nil
}

func (d *inputDecoder) callOutput(param string, m map[string]json.RawMessage) error {
	id, err := wire.RequiredString(m, "call_id")
	if err != nil {
		return wire.WithParam(err, param+".call_id")
	}
	out, err := decodeInputContent(param+".output", m["output"])
	if err != nil {
		return err
	}
	d.add(wire.Message{Role: "tool", Content: out, ToolCallID: id, Name: d.names[id]})
	return nil
}

// add appends msg, folding a call into the assistant message before it.
func (d *inputDecoder) add(msg wire.Message) {
	for _, c := range msg.ToolCalls {
		d.names[c.ID] = c.Name
	}
	if n := len(d.msgs); n > 0 && msg.Role == "assistant" && msg.ContentNull && d.msgs[n-1].Role == "assistant" {
		last := &d.msgs[n-1]
		last.ToolCalls = append(last.ToolCalls, msg.ToolCalls...)
		return
	}
	d.msgs = append(d.msgs, msg)
}

// responsesParts are the content parts a Responses input accepts: text
// in or out (a refusal is no text the model can be given back).
var responsesParts = map[string]int{"input_text": wire.PartText, "output_text": wire.PartText, "text": wire.PartText, "refusal": wire.PartSkip}

// decodeInputContent reads a message's content or a call's output: a
// string, or text parts joined without separator.
func decodeInputContent(param string, raw json.RawMessage) (string, error) {
	return wire.JoinTextParts(param, raw, responsesParts)
}
