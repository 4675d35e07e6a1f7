package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// POST /v1/responses, OpenAI's Responses API: its body decoded into the
// internal request (chatRequest). The rules behind the fields (sampling
// ranges, stop sequences, tools, schemas, the adapter) are chat's; only
// the spelling differs: flat function tools, text.format, input items,
// max_output_tokens.

const responsesPath = "/v1/responses"

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
func (rc *responsesCall) conversation(msgs []chatMessage) []chatMessage {
	if rc.hasInstr {
		return msgs[1:]
	}
	return msgs
}

// responses serves POST /v1/responses.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) error {
	return s.generate(w, r, func(data []byte) (*chatRequest, wire, error) {
		req, call, err := parseResponsesRequest(data, s.stored)
		return req, &responsesWire{call: call, store: s.stored}, err
	})
}

// getResponse serves GET /v1/responses/{id}: a stored response's object.
func (s *Server) getResponse(w http.ResponseWriter, r *http.Request) error {
	body, ok := s.stored.body(r.PathValue("id"))
	if !ok {
		return s.stored.notFound(r.PathValue("id"), "", "not_found")
	}
	return writeJSON(w, http.StatusOK, body)
}

// parseResponsesRequest decodes a Responses body into the internal
// request and what the Responses call adds to it; st is the store that
// previous_response_id and item_reference read.
func parseResponsesRequest(data []byte, st *responseStore) (*chatRequest, *responsesCall, error) {
	fields, err := decodeObject(data)
	if err != nil {
		return nil, nil, err
	}
	req := &chatRequest{api: apiResponses}
	rc := &responsesCall{store: true}
	if req.Model, err = requiredString(fields, "model"); err != nil {
		return nil, nil, err
	}
	if err := decodeResponsesState(fields, rc); err != nil {
		return nil, nil, err
	}
	var prior []chatMessage
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
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: rc.instructions})
	}
	req.Messages = append(append(req.Messages, prior...), input...)
	if err := decodeResponsesOptions(fields, req); err != nil {
		return nil, nil, err
	}
	if req.Agent, err = decodeResponsesAgent(fields); err != nil {
		return nil, nil, err
	}
	if req.TemplateKwargs, err = decodeTemplateKwargs(fields["chat_template_kwargs"]); err != nil {
		return nil, nil, err
	}
	return req, rc, decodeReasoning(fields["reasoning"], req)
}

// decodeReasoning reads reasoning.effort as the template's
// enable_thinking: none turns thinking off, any other effort on (a
// thinking section's length is the model's own).
func decodeReasoning(raw json.RawMessage, req *chatRequest) error {
	if isNull(raw) {
		return nil
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil || r == nil {
		return wrongType("reasoning", "an object", raw)
	}
	effort, err := optionalString(r, "effort")
	if err != nil || effort == nil {
		return withParam(err, "reasoning.effort")
	}
	switch *effort {
	case "none":
		req.setThinking(false)
	case "minimal", "low", "medium", "high", "xhigh":
		req.setThinking(true)
	default:
		return invalid("reasoning.effort", "invalid_value", "'reasoning.effort' must be none, minimal, low, medium, high or xhigh, got '%s'", clip(*effort))
	}
	return nil
}

// decodeResponsesState reads instructions, previous_response_id, store
// and metadata.
func decodeResponsesState(fields map[string]json.RawMessage, rc *responsesCall) error {
	if in, err := optionalString(fields, "instructions"); err != nil {
		return err
	} else if in != nil {
		rc.instructions, rc.hasInstr = *in, true
	}
	if p, err := optionalString(fields, "previous_response_id"); err != nil {
		return err
	} else if p != nil {
		rc.previous = *p
	}
	if st, err := optionalBool(fields, "store"); err != nil {
		return err
	} else if st != nil {
		rc.store = *st
	}
	if raw := fields["metadata"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &rc.metadata); err != nil {
			return wrongType("metadata", "an object of string values", raw)
		}
		if len(rc.metadata) > 16 {
			return invalid("metadata", "invalid_value", "'metadata' may hold at most 16 keys, got %d", len(rc.metadata))
		}
	}
	return nil
}

// decodeResponsesOptions reads max_output_tokens, sampling, stop,
// stream, user, include_performance and the adapter.
func decodeResponsesOptions(fields map[string]json.RawMessage, req *chatRequest) error {
	if v, err := optionalInt(fields, "max_output_tokens"); err != nil {
		return err
	} else if v != nil {
		if *v < 1 {
			return invalid("max_output_tokens", "invalid_value", "'max_output_tokens' must be at least 1, got %d", *v)
		}
		req.MaxTokens = int(min(*v, math.MaxInt32))
	}
	var err error
	if err := decodeSampling(fields, req); err != nil {
		return err
	}
	if req.Stop, err = decodeStop("stop", fields["stop"]); err != nil {
		return err
	}
	if err := decodeStreaming(fields, req); err != nil {
		return err
	}
	if u, err := optionalString(fields, "user"); err != nil {
		return err
	} else if u != nil {
		req.User = *u
	}
	if t, err := optionalString(fields, "truncation"); err != nil {
		return err
	} else if t != nil && *t != "disabled" && *t != "auto" {
		return invalid("truncation", "invalid_value", "'truncation' must be disabled or auto, got '%s'", clip(*t))
	}
	return decodeAdapter(fields, req)
}

// decodeResponsesAgent reads tools, tool_choice, parallel_tool_calls,
// text.format, include and top_logprobs.
func decodeResponsesAgent(fields map[string]json.RawMessage) (agentFields, error) {
	a := agentFields{Parallel: true, N: 1}
	var err error
	if a.Tools, err = decodeToolList(fields["tools"], decodeResponsesTool, ".name"); err != nil {
		return a, err
	}
	if err := decodeResponsesToolChoice(fields["tool_choice"], &a); err != nil {
		return a, err
	}
	if a.Format, err = decodeTextFormat(fields["text"]); err != nil {
		return a, err
	}
	if err := decodeParallel(fields, &a, "text.format"); err != nil {
		return a, err
	}
	return a, decodeResponsesLogprobs(fields, &a)
}

// decodeResponsesTool reads one flat function tool.
func decodeResponsesTool(param string, raw json.RawMessage) (tool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return tool{}, wrongType(param, "an object", raw)
	}
	typ, err := requiredString(fields, "type")
	if err != nil {
		return tool{}, withParam(err, param+".type")
	}
	if typ != "function" {
		return tool{}, invalid(param+".type", "invalid_value",
			"tools of type '%s' are not supported: this server runs no hosted tools, only 'function'", clip(typ))
	}
	return decodeFunction(param, fields, "parameters")
}

// decodeResponsesToolChoice reads none, auto, required or
// {"type":"function","name":...}.
func decodeResponsesToolChoice(raw json.RawMessage, a *agentFields) error {
	if isNull(raw) {
		a.ToolChoice = toolChoiceNone
		if len(a.Tools) > 0 {
			a.ToolChoice = toolChoiceAuto
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return setToolChoice(a, "tool_choice", s)
	}
	var obj struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return wrongType("tool_choice", "a string or an object naming a function", raw)
	}
	if obj.Type != "function" {
		return invalid("tool_choice.type", "invalid_value", "'tool_choice.type' must be 'function', got '%s'", clip(obj.Type))
	}
	return nameToolChoice(a, "tool_choice.name", obj.Name)
}

// decodeTextFormat reads text.format: text, json_object, or json_schema
// with its name, schema and strict given flat.
func decodeTextFormat(raw json.RawMessage) (responseFormat, error) {
	if isNull(raw) {
		return responseFormat{}, nil
	}
	var text map[string]json.RawMessage
	if err := json.Unmarshal(raw, &text); err != nil || text == nil {
		return responseFormat{}, wrongType("text", "an object", raw)
	}
	fr := text["format"]
	if isNull(fr) {
		return responseFormat{}, nil
	}
	typ, f, err := decodeFormatType("text.format", fr)
	if err != nil || typ != "json_schema" {
		return responseFormat{Type: typ}, err
	}
	if isNull(f["schema"]) {
		return responseFormat{}, invalid("text.format.schema", "missing_required_parameter", "missing required parameter: 'text.format.schema'")
	}
	return decodeSchemaFormat("text.format", f)
}

// decodeResponsesLogprobs reads include and top_logprobs (0..20):
// output_text's log probabilities come with the include value
// message.output_text.logprobs.
func decodeResponsesLogprobs(fields map[string]json.RawMessage, a *agentFields) error {
	if raw := fields["include"]; !isNull(raw) {
		var inc []string
		if err := json.Unmarshal(raw, &inc); err != nil {
			return wrongType("include", "an array of strings", raw)
		}
		for i, v := range inc {
			if !responsesIncludes[v] {
				return invalid(fmt.Sprintf("include[%d]", i), "invalid_value",
					"'include' value '%s' is not supported: only '%s' (and 'reasoning.encrypted_content', which adds nothing here)", clip(v), logprobsInclude)
			}
			a.Logprobs = a.Logprobs || v == logprobsInclude
		}
	}
	top, err := optionalInt(fields, "top_logprobs")
	if err != nil || top == nil {
		return err
	}
	if *top < 0 || *top > sampling.MaxTopLogprobs {
		return invalid("top_logprobs", "invalid_value", "'top_logprobs' must be between 0 and %d, got %d", sampling.MaxTopLogprobs, *top)
	}
	if *top > 0 {
		a.Logprobs = true // the alternatives come with the tokens' own
	}
	a.TopLogprobs = int(*top)
	return nil
}
