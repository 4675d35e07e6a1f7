package responses

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/server/wire"
)

// POST /v1/responses, OpenAI's Responses API: its body decoded into the
// internal request (wire.Request). The rules behind the fields (sampling
// ranges, stop sequences, tools, schemas, the adapter) are chat's; only
// the spelling differs: flat function tools, text.format, input items,
// max_output_tokens.

// logprobsInclude is the include value that asks for output_text's log
// probabilities.
const logprobsInclude = "message.output_text.logprobs"

// responsesIncludes are the include values the server accepts; it
// generates no reasoning to encrypt and searches no files, so the others
// name nothing there is.
var responsesIncludes = map[string]bool{logprobsInclude: true, "reasoning.encrypted_content": true}

// responsesCall is what a Responses request adds to the internal one.
type responsesCall struct {
	instructions string            // "" when absent
	hasInstr     bool              // instructions was given
	previous     string            // previous_response_id, "" when absent
	store        bool              // keep the response for previous_response_id (OpenAI's default: true)
	metadata     map[string]string // echoed on the response object
}

// conversation is msgs without the instructions' system message: what
// previous_response_id carries to a later turn.
func (rc *responsesCall) conversation(msgs []wire.Message) []wire.Message {
	if rc.hasInstr {
		return msgs[1:]
	}
	return msgs
}

// Parse decodes a Responses body into the internal
// request and the wire that answers it, which keeps what the Responses
// call adds (instructions, previous_response_id, store, metadata); st is
// the store that previous_response_id and item_reference read, and
// where the answer is kept.
func Parse(data []byte, st *Store) (*wire.Request, *Wire, error) {
	fields, err := wire.DecodeObject(data)
	if err != nil {
		return nil, nil, err
	}
	req := &wire.Request{API: wire.APIResponses}
	rc := &responsesCall{store: true}
	if req.Model, err = wire.RequiredString(fields, "model"); err != nil {
		return nil, nil, err
	}
	if err := decodeResponsesState(fields, rc); err != nil {
		return nil, nil, err
	}
	var prior []wire.Message
	if rc.previous != "" {
		if prior, err = st.conversation(rc.previous); err != nil {
			return nil, nil, err
		}
	}
	input, err := decodeResponsesInput(fields["input"], st)
	if err != nil {
		return nil, nil, err
	}
	if rc.hasInstr {
		req.Messages = append(req.Messages, wire.Message{Role: "system", Content: rc.instructions})
	}
	req.Messages = append(append(req.Messages, prior...), input...)
	if err := decodeResponsesOptions(fields, req); err != nil {
		return nil, nil, err
	}
	if req.Agent, err = decodeResponsesAgent(fields); err != nil {
		return nil, nil, err
	}
	if req.TemplateKwargs, err = wire.DecodeTemplateKwargs(fields["chat_template_kwargs"]); err != nil {
		return nil, nil, err
	}
	return req, &Wire{call: rc, store: st}, decodeReasoning(fields["reasoning"], req)
}

// decodeReasoning reads reasoning.effort as the template's
// enable_thinking: none turns thinking off, any other effort on (a
// thinking section's length is the model's own).
func decodeReasoning(raw json.RawMessage, req *wire.Request) error {
	if wire.IsNull(raw) {
		return nil
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil || r == nil {
		return wire.WrongType("reasoning", "an object", raw)
	}
	effort, err := wire.OptionalString(r, "effort")
	if err != nil || effort == nil {
		return wire.WithParam(err, "reasoning.effort")
	}
	switch *effort {
	case "none":
		req.SetThinking(false)
	case "minimal", "low", "medium", "high", "xhigh":
		req.SetThinking(true)
	default:
		return wire.Invalid("reasoning.effort", "invalid_value", "'reasoning.effort' must be none, minimal, low, medium, high or xhigh, got '%s'", wire.Clip(*effort))
	}
	return nil
}

// decodeResponsesState reads instructions, previous_response_id, store
// and metadata.
func decodeResponsesState(fields map[string]json.RawMessage, rc *responsesCall) error {
	if in, err := wire.OptionalString(fields, "instructions"); err != nil {
		return err
	} else if in != nil {
		rc.instructions, rc.hasInstr = *in, true
	}
	if p, err := wire.OptionalString(fields, "previous_response_id"); err != nil {
		return err
	} else if p != nil {
		rc.previous = *p
	}
	if st, err := wire.OptionalBool(fields, "store"); err != nil {
		return err
	} else if st != nil {
		rc.store = *st
	}
	if raw := fields["metadata"]; !wire.IsNull(raw) {
		if err := json.Unmarshal(raw, &rc.metadata); err != nil {
			return wire.WrongType("metadata", "an object of string values", raw)
		}
		if len(rc.metadata) > 16 {
			return wire.Invalid("metadata", "invalid_value", "'metadata' may hold at most 16 keys, got %d", len(rc.metadata))
		}
	}
	return nil
}

// decodeResponsesOptions reads max_output_tokens, sampling, stop,
// stream, user, include_performance and the adapter.
func decodeResponsesOptions(fields map[string]json.RawMessage, req *wire.Request) error {
	if v, err := wire.OptionalInt(fields, "max_output_tokens"); err != nil {
		return err
	} else if v != nil {
		if *v < 1 {
			return wire.Invalid("max_output_tokens", "invalid_value", "'max_output_tokens' must be at least 1, got %d", *v)
		}
		req.MaxTokens = int(min(*v, math.MaxInt32))
	}
	if err := wire.DecodeGeneration(fields, req, "stop", false); err != nil {
		return err
	}
	if u, err := wire.OptionalString(fields, "user"); err != nil {
		return err
	} else if u != nil {
		req.User = *u
	}
	if t, err := wire.OptionalString(fields, "truncation"); err != nil {
		return err
	} else if t != nil && *t != "disabled" && *t != "auto" {
		return wire.Invalid("truncation", "invalid_value", "'truncation' must be disabled or auto, got '%s'", wire.Clip(*t))
	}
	return wire.DecodeAdapter(fields, req)
}

// decodeResponsesAgent reads tools, tool_choice, parallel_tool_calls,
// text.format, include and top_logprobs.
func decodeResponsesAgent(fields map[string]json.RawMessage) (wire.AgentFields, error) {
	a := wire.AgentFields{Parallel: true, N: 1}
	var err error
	if a.Tools, err = wire.DecodeToolList(fields["tools"], decodeResponsesTool, ".name"); err != nil {
		return a, err
	}
	if err := decodeResponsesToolChoice(fields["tool_choice"], &a); err != nil {
		return a, err
	}
	if a.Format, err = decodeTextFormat(fields["text"]); err != nil {
		return a, err
	}
	if err := wire.DecodeParallel(fields, &a, "text.format"); err != nil {
		return a, err
	}
	return a, decodeResponsesLogprobs(fields, &a)
}

// decodeResponsesTool reads one flat function tool.
func decodeResponsesTool(param string, raw json.RawMessage) (wire.Tool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return wire.Tool{}, wire.WrongType(param, "an object", raw)
	}
	typ, err := wire.RequiredString(fields, "type")
	if err != nil {
		return wire.Tool{}, wire.WithParam(err, param+".type")
	}
	if typ != "function" {
		return wire.Tool{}, wire.Invalid(param+".type", "invalid_value",
			"tools of type '%s' are not supported: this server runs no hosted tools, only 'function'", wire.Clip(typ))
	}
	return wire.DecodeFunction(param, fields, "parameters")
}

// decodeResponsesToolChoice reads none, auto, required or
// {"type":"function","name":...}.
func decodeResponsesToolChoice(raw json.RawMessage, a *wire.AgentFields) error {
	if wire.IsNull(raw) {
		a.ToolChoice = wire.ToolChoiceNone
		if len(a.Tools) > 0 {
			a.ToolChoice = wire.ToolChoiceAuto
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return wire.SetToolChoice(a, "tool_choice", s)
	}
	var obj struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return wire.WrongType("tool_choice", "a string or an object naming a function", raw)
	}
	if obj.Type != "function" {
		return wire.Invalid("tool_choice.type", "invalid_value", "'tool_choice.type' must be 'function', got '%s'", wire.Clip(obj.Type))
	}
	return wire.NameToolChoice(a, "tool_choice.name", obj.Name)
}

// decodeTextFormat reads text.format: text, json_object, or json_schema
// with its name, schema and strict given flat.
func decodeTextFormat(raw json.RawMessage) (wire.ResponseFormat, error) {
	if wire.IsNull(raw) {
		return wire.ResponseFormat{}, nil
	}
	var text map[string]json.RawMessage
	if err := json.Unmarshal(raw, &text); err != nil || text == nil {
		return wire.ResponseFormat{}, wire.WrongType("text", "an object", raw)
	}
	fr := text["format"]
	if wire.IsNull(fr) {
		return wire.ResponseFormat{}, nil
	}
	typ, f, err := wire.DecodeFormatType("text.format", fr)
	if err != nil || typ != "json_schema" {
		return wire.ResponseFormat{Type: typ}, err
	}
	if wire.IsNull(f["schema"]) {
		return wire.ResponseFormat{}, wire.Invalid("text.format.schema", "missing_required_parameter", "missing required parameter: 'text.format.schema'")
	}
	return wire.DecodeSchemaFormat("text.format", f)
}

// decodeResponsesLogprobs reads include and top_logprobs (0..20):
// output_text's log probabilities come with the include value
// message.output_text.logprobs.
func decodeResponsesLogprobs(fields map[string]json.RawMessage, a *wire.AgentFields) error {
	if raw := fields["include"]; !wire.IsNull(raw) {
		var inc []string
		if err := json.Unmarshal(raw, &inc); err != nil {
			return wire.WrongType("include", "an array of strings", raw)
		}
		for i, v := range inc {
			if !responsesIncludes[v] {
				return wire.Invalid(fmt.Sprintf("include[%d]", i), "invalid_value",
					"'include' value '%s' is not supported: only '%s' (and 'reasoning.encrypted_content', which adds nothing here)", wire.Clip(v), logprobsInclude)
			}
			a.Logprobs = a.Logprobs || v == logprobsInclude
		}
	}
	top, err := wire.OptionalInt(fields, "top_logprobs")
	if err != nil || top == nil {
		return err
	}
	if *top < 0 || *top > sampling.MaxTopLogprobs {
		return wire.Invalid("top_logprobs", "invalid_value", "'top_logprobs' must be between 0 and %d, got %d", sampling.MaxTopLogprobs, *top)
	}
	if *top > 0 {
		a.Logprobs = true // the alternatives come with the tokens' own
	}
	a.TopLogprobs = int(*top)
	return nil
}
