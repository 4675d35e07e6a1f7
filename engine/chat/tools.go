package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/ardanlabs/jinja"
)

// ToolCall is a call an assistant turn made (an entry of OpenAI's
// tool_calls).
type ToolCall struct {
	// ID is the call's id, which the tool message answering it repeats
	// (Message.ToolCallID).
	ID string
	// Name is the function's name.
	Name string
	// Arguments is the JSON object text of the call's arguments, as
	// OpenAI's API carries it; "" stands for {}. The template sees the
	// object (a dict, its keys in the order written), as transformers
	// and vLLM give it: Qwen3.5's template iterates its items.
	Arguments string
}

// ToolSpec is a function the model may call (an entry of OpenAI's tools).
type ToolSpec struct {
	Name, Description string
	// Parameters is the JSON Schema object of the arguments; nil for a
	// function without parameters.
	Parameters json.RawMessage
}

// InputError reports a part of the request that cannot be given to a
// template: tool-call arguments or tool parameters that are not a JSON
// object. It is a defect of the request.
type InputError struct {
	// Param names the part as OpenAI's API does:
	// "messages[2].tool_calls[0].function.arguments",
	// "tools[1].function.parameters".
	Param string
	Err   error
}

func (e *InputError) Error() string { return "chat: " + e.Param + ": " + e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

var errNotObject = errors.New("not a JSON object")

// part says which string of the request a field is.
type part uint8

const (
	partContent part = iota
	partName
	partToolCallID
	partCallID
	partCallName
	partCallArguments // a string inside a call's arguments
	partToolName
	partToolDescription
	partToolParameters // a string inside a tool's parameters
)

// field is one string of the request that the template sees: a message's
// content, a call's name, a string inside a tool's parameters...
type field struct {
	text string
	part part
	// at is the message's index, or the tool's for the tool parts; call
	// the call's index within the message.
	at, call int
	// key says the string is a JSON object key (of arguments or
	// parameters), which is never replaced by a placeholder: templates
	// look keys up by name and sort them.
	key bool
}

// message is the index of the field's message, -1 for a tool's field.
func (f field) message() int {
	switch f.part {
	case partToolName, partToolDescription, partToolParameters:
		return -1
	}
	return f.at
}

// param names the field's place in the request as OpenAI's API does.
func (f field) param() string {
	msg := "messages[" + strconv.Itoa(f.at) + "]"
	call := msg + ".tool_calls[" + strconv.Itoa(f.call) + "]"
	tool := "tools[" + strconv.Itoa(f.at) + "].function"
	switch f.part {
	case partName:
		return msg + ".name"
	case partToolCallID:
		return msg + ".tool_call_id"
	case partCallID:
		return call + ".id"
	case partCallName:
		return call + ".function.name"
	case partCallArguments:
		return call + ".function.arguments"
	case partToolName:
		return tool + ".name"
	case partToolDescription:
		return tool + ".description"
	case partToolParameters:
		return tool + ".parameters"
	}
	return msg + ".content"
}

// recorder records the request's strings as the template's values are
// built (input). With placeholders on, each string that is not a key
// becomes a placeholder holding its index in fields (spans.go). A nil
// recorder records nothing and changes nothing: Render's case.
type recorder struct {
	placeholders bool
	fields       []field
}

// str is the template value of the string f.text.
func (r *recorder) str(f field) jinja.Value {
	if r == nil || f.text == "" {
		return jinja.NewString(f.text)
	}
	r.fields = append(r.fields, f)
	if !r.placeholders {
		return jinja.NewString(f.text)
	}
	return jinja.NewString(placeholderOpen + strconv.Itoa(len(r.fields)-1) + placeholderClose)
}

// key records the object key f.text and returns it unchanged.
func (r *recorder) key(f field) string {
	if r != nil && f.text != "" {
		f.key = true
		r.fields = append(r.fields, f)
	}
	return f.text
}

// input converts msgs and tools into the values a template sees as
// messages and tools, in the shape transformers' apply_chat_template
// documents and vLLM passes: a message is {role, content} with
// tool_calls, tool_call_id and name only where it has them (Llama 3.1's
// template tests 'tool_calls' in message), a call is {id, type:
// "function", function: {name, arguments}} with the arguments a dict, and
// a tool is {type: "function", function: {name, description,
// parameters}} with the parameters a dict. Tools are none when there are
// none. The strings go through r.
func input(msgs []Message, tools []ToolSpec, r *recorder) (messages, toolList jinja.Value, err error) {
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		md := d.AsDict()
		md.Set("role", jinja.NewString(m.Role))
		if m.NullContent {
			md.Set("content", jinja.None())
		} else {
			md.Set("content", r.str(field{text: m.Content, part: partContent, at: i}))
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]jinja.Value, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				if calls[j], err = callValue(c, i, j, r); err != nil {
					return jinja.Value{}, jinja.Value{}, err
				}
			}
			md.Set("tool_calls", jinja.NewList(calls))
		}
		if m.ToolCallID != "" {
			md.Set("tool_call_id", r.str(field{text: m.ToolCallID, part: partToolCallID, at: i}))
		}
		if m.Name != "" {
			md.Set("name", r.str(field{text: m.Name, part: partName, at: i}))
		}
		list[i] = d
	}
	if len(tools) == 0 {
		return jinja.NewList(list), jinja.None(), nil
	}
	tl := make([]jinja.Value, len(tools))
	for k, t := range tools {
		fn := jinja.NewDict()
		fd := fn.AsDict()
		fd.Set("name", r.str(field{text: t.Name, part: partToolName, at: k}))
		if t.Description != "" {
			fd.Set("description", r.str(field{text: t.Description, part: partToolDescription, at: k}))
		}
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			f := field{part: partToolParameters, at: k}
			p, err := objectValue(t.Parameters, f, r)
			if err != nil {
				return jinja.Value{}, jinja.Value{}, &InputError{Param: f.param(), Err: err}
			}
			fd.Set("parameters", p)
		}
		tool := jinja.NewDict()
		tool.AsDict().Set("type", jinja.NewString("function"))
		tool.AsDict().Set("function", fn)
		tl[k] = tool
	}
	return jinja.NewList(list), jinja.NewList(tl), nil
}

// callValue is the template value of call j of message i.
func callValue(c ToolCall, i, j int, r *recorder) (jinja.Value, error) {
	args := jinja.NewDict()
	if len(bytes.TrimSpace([]byte(c.Arguments))) > 0 {
		f := field{part: partCallArguments, at: i, call: j}
		var err error
		if args, err = objectValue([]byte(c.Arguments), f, r); err != nil {
			return jinja.Value{}, &InputError{Param: f.param(), Err: err}
		}
	}
	fn := jinja.NewDict()
	fn.AsDict().Set("name", r.str(field{text: c.Name, part: partCallName, at: i, call: j}))
	fn.AsDict().Set("arguments", args)
	v := jinja.NewDict()
	v.AsDict().Set("id", r.str(field{text: c.ID, part: partCallID, at: i, call: j}))
	v.AsDict().Set("type", jinja.NewString("function"))
	v.AsDict().Set("function", fn)
	return v, nil
}

// objectValue decodes the JSON object text raw into a template value,
// keeping the keys' order (Python's json.loads does; jinja.FromGoValue of
// a map would sort them), integers as integers. Its strings go through r
// as the field f.
func objectValue(raw []byte, f field, r *recorder) (jinja.Value, error) {
	// Valid bounds the nesting (encoding/json refuses more than 10000
	// levels) before the recursive decoding below.
	if !json.Valid(raw) {
		return jinja.Value{}, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, f, r)
	if err != nil {
		return jinja.Value{}, err
	}
	if !v.IsDict() {
		return jinja.Value{}, errNotObject
	}
	return v, nil
}

// decodeValue decodes the next JSON value of dec.
func decodeValue(dec *json.Decoder, f field, r *recorder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Value{}, fmt.Errorf("decode: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			var items []jinja.Value
			for dec.More() {
				v, err := decodeValue(dec, f, r)
				if err != nil {
					return jinja.Value{}, err
				}
				items = append(items, v)
			}
			_, err := dec.Token() // ]
			return jinja.NewList(items), err
		}
		d := jinja.NewDict()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return jinja.Value{}, fmt.Errorf("decode: %w", err)
			}
			k, _ := kt.(string)
			kf := f
			kf.text = k
			k = r.key(kf)
			v, err := decodeValue(dec, f, r)
			if err != nil {
				return jinja.Value{}, err
			}
			d.AsDict().Set(k, v)
		}
		_, err := dec.Token() // }
		return d, err
	case string:
		sf := f
		sf.text = t
		return r.str(sf), nil
	case json.Number:
		return jinja.FromGoValue(t), nil
	case bool:
		return jinja.NewBool(t), nil
	}
	return jinja.None(), nil
}
