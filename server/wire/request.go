package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Request is a validated generation request, the internal request the
// body of every wire format decodes into. Optional
// fields use pointers: nil means absent or null.
type Request struct {
	Model              string
	Messages           []Message
	MaxTokens          int // 0: not given (generate up to the context)
	Temperature        *float64
	TopP               *float64
	TopK               int
	Seed               *int64
	Stop               []string
	Stream             bool
	IncludeUsage       bool
	User               string
	IncludePerformance *bool // nil: absent or null (server default applies)
	// AdapterGiven says the adapter field was present; Adapter is its
	// name ("": the base model). Absent: the server default
	// (server/adapter_request.go).
	AdapterGiven bool
	Adapter      string
	Penalties    Penalties
	// Legacy marks a POST /v1/completions request (server/openai): Prompt
	// is its text, Messages is empty, and the response is a
	// text_completion.
	Legacy bool
	Prompt string
	// API is the wire format the request came in (choice.go).
	API API
	// Agent holds tools, tool_choice, response_format, logprobs and n
	// (agent.go).
	Agent AgentFields
	// TemplateKwargs are extra chat-template variables
	// (chat_template_kwargs, such as enable_thinking), nil for none.
	TemplateKwargs map[string]any
}

// Message is one message of the conversation, as the chat template
// renders it.
type Message struct {
	Role    string
	Content string
	// ContentNull: an assistant message with tool calls and content null.
	ContentNull bool
	ToolCalls   []ToolCall // an assistant's calls
	ToolCallID  string     // a tool result: the call it answers
	Name        string     // the optional name of the participant (or tool)
}

// ToolCall is one function call: generated, or sent back in an
// assistant message.
type ToolCall struct {
	ID, Name  string
	Arguments string // a JSON object's text
}

// Limits of the request decoder.
const (
	MaxStopSequences = 4
	maxStopLen       = 256
)

// Limits of chat_template_kwargs.
const maxTemplateKwargs = 32

// templateReserved are the template variables the server sets itself; a
// request cannot pass them.
var templateReserved = map[string]bool{"messages": true, "tools": true, "documents": true, "bos_token": true,
	"eos_token": true, "add_generation_prompt": true, "strftime_now": true, "raise_exception": true}

// DecodeTemplateKwargs reads chat_template_kwargs: an object of extra
// template variables, as vLLM and llama-server take them (Qwen3's
// enable_thinking false turns thinking off).
func DecodeTemplateKwargs(raw json.RawMessage) (map[string]any, error) {
	if IsNull(raw) {
		return nil, nil
	}
	var kw map[string]any
	if err := json.Unmarshal(raw, &kw); err != nil || kw == nil {
		return nil, WrongType("chat_template_kwargs", "an object", raw)
	}
	if len(kw) > maxTemplateKwargs {
		return nil, Invalid("chat_template_kwargs", "invalid_value", "'chat_template_kwargs' may hold at most %d keys, got %d", maxTemplateKwargs, len(kw))
	}
	for k := range kw {
		if templateReserved[k] {
			return nil, Invalid("chat_template_kwargs", "invalid_value", "'chat_template_kwargs' cannot set '%s': the server sets it from the request", Clip(k))
		}
	}
	return kw, nil
}

// SetThinking sets enable_thinking, what Anthropic's thinking and
// Responses' reasoning.effort ask for, unless chat_template_kwargs set it.
func (req *Request) SetThinking(on bool) {
	if _, set := req.TemplateKwargs["enable_thinking"]; set {
		return
	}
	if req.TemplateKwargs == nil {
		req.TemplateKwargs = map[string]any{}
	}
	req.TemplateKwargs["enable_thinking"] = on
}

// DecodeStreaming reads stream and include_performance, which every API
// spells alike.
func DecodeStreaming(fields map[string]json.RawMessage, req *Request) error {
	if s, err := OptionalBool(fields, "stream"); err != nil {
		return err
	} else if s != nil {
		req.Stream = *s
	}
	var err error
	req.IncludePerformance, err = OptionalBool(fields, "include_performance")
	return err
}

// DecodeObject parses the body as exactly one JSON object. It unmarshals
// the body in place: a json.Decoder would copy it into a buffer grown by
// doubling, twice the body again in memory.
func DecodeObject(data []byte) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Invalid("", "invalid_json", "the request body is empty; send a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var ute *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &ute):
			return nil, Invalid("", "invalid_json", "the request body must be a JSON object")
		case errors.As(err, &se) && se.Offset > 0 && json.Valid(data[:se.Offset-1]):
			// A whole value, then more: report what the value is first.
			if v := bytes.TrimSpace(data[:se.Offset-1]); len(v) > 0 && v[0] != '{' {
				return nil, Invalid("", "invalid_json", "the request body must be a JSON object")
			}
			return nil, Invalid("", "invalid_json", "the request body has data after the JSON object")
		}
		return nil, Invalid("", "invalid_json", "the request body is not valid JSON: %s", jsonErrText(err))
	}
	if fields == nil {
		return nil, Invalid("", "invalid_json", "the request body must be a JSON object")
	}
	return fields, nil
}

// jsonErrText describes a syntax error without echoing request content.
func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of input"
	}
	return "malformed JSON"
}

// DecodeSampling reads temperature, top_p, top_k, seed and the
// penalties, and checks them with sampling.Params.Validate
// (ValidateSampling): every API's sampling fields, one rule.
func DecodeSampling(fields map[string]json.RawMessage, req *Request) error {
	if err := decodeSamplingFields(fields, req); err != nil {
		return err
	}
	var err error
	if req.Penalties, err = decodePenalties(fields); err != nil {
		return err
	}
	return ValidateSampling(req, fields, 0)
}

// decodeSamplingFields reads temperature, top_p, top_k and seed.
func decodeSamplingFields(fields map[string]json.RawMessage, req *Request) error {
	var err error
	if req.Temperature, err = OptionalNumber(fields, "temperature"); err != nil {
		return err
	}
	if req.TopP, err = OptionalNumber(fields, "top_p"); err != nil {
		return err
	}
	if k, err := OptionalInt(fields, "top_k"); err != nil {
		return err
	} else if k != nil {
		req.TopK = int(*k)
	}
	if req.Seed, err = OptionalInt(fields, "seed"); err != nil {
		return err
	}
	return nil
}

// DecodeGeneration reads what every API's generation shares, in one
// order: the sampling fields (DecodeSampling), the stop sequences under
// stopParam (DecodeStop; arrayOnly refuses a lone string, as Messages'
// stop_sequences does) and stream and include_performance
// (DecodeStreaming).
func DecodeGeneration(fields map[string]json.RawMessage, req *Request, stopParam string, arrayOnly bool) error {
	if err := DecodeSampling(fields, req); err != nil {
		return err
	}
	raw := fields[stopParam]
	if arrayOnly && !IsNull(raw) && JSONKind(raw) != "an array" {
		return WrongType(stopParam, "an array of strings", raw)
	}
	var err error
	if req.Stop, err = DecodeStop(stopParam, raw); err != nil {
		return err
	}
	return DecodeStreaming(fields, req)
}

// DecodeStop reads stop sequences: chat's stop (a string or an array),
// or the array Messages calls stop_sequences (param).
func DecodeStop(param string, raw json.RawMessage) ([]string, error) {
	if IsNull(raw) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, Invalid(param, "invalid_value", "'%s' must not be an empty string", param)
		}
		if len(one) > maxStopLen {
			return nil, Invalid(param, "invalid_value", "'%s' sequences must be at most %d bytes", param, maxStopLen)
		}
		return []string{one}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, WrongType(param, "a string or an array of strings", raw)
	}
	if len(items) > MaxStopSequences {
		return nil, Invalid(param, "invalid_value", "'%s' may hold at most %d sequences, got %d", param, MaxStopSequences, len(items))
	}
	stops := make([]string, 0, len(items))
	for i, it := range items {
		var s string
		if err := json.Unmarshal(it, &s); err != nil {
			return nil, WrongType(fmt.Sprintf("%s[%d]", param, i), "a string", it)
		}
		if s == "" {
			return nil, Invalid(fmt.Sprintf("%s[%d]", param, i), "invalid_value", "stop sequences must not be empty")
		}
		if len(s) > maxStopLen {
			return nil, Invalid(fmt.Sprintf("%s[%d]", param, i), "invalid_value", "stop sequences must be at most %d bytes", maxStopLen)
		}
		stops = append(stops, s)
	}
	return stops, nil
}

// DecodeAdapter reads a generation request's adapter field
// (docs/maintenance.md section 5): absent = the server default; null or "" =
// the base model; a string = that adapter. Another type is a 400.
func DecodeAdapter(fields map[string]json.RawMessage, req *Request) error {
	if _, ok := fields["adapter"]; !ok {
		return nil
	}
	name, err := OptionalString(fields, "adapter")
	if err != nil {
		return err
	}
	req.AdapterGiven = true
	if name != nil {
		req.Adapter = *name
	}
	return nil
}
