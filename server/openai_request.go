package server

import (
	"encoding/json"
	"math"
)

// A chat completion's body (POST /v1/chat/completions) decoded into the
// internal request; legacy completions share its options
// (openai_completions_request.go).

// parseChatRequest validates a chat completion body (read whole by the
// body middleware, body.go). Unknown fields are accepted and ignored, as
// OpenAI does; a known field of the wrong type or out of range is a 400
// naming the field.
func parseChatRequest(data []byte) (*chatRequest, error) {
	fields, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	req := &chatRequest{}
	if req.Model, err = requiredString(fields, "model"); err != nil {
		return nil, err
	}
	if req.Messages, err = decodeMessages(fields["messages"]); err != nil {
		return nil, err
	}
	if err := decodeOptions(fields, req); err != nil {
		return nil, err
	}
	if req.Agent, err = decodeAgentFields(fields); err != nil {
		return nil, err
	}
	if req.TemplateKwargs, err = decodeTemplateKwargs(fields["chat_template_kwargs"]); err != nil {
		return nil, err
	}
	return req, nil
}

// decodeOptions reads the fields chat and legacy completions share: the
// limits, sampling, stop sequences, n, streaming, user and
// include_performance.
func decodeOptions(fields map[string]json.RawMessage, req *chatRequest) error {
	var err error
	if err := decodeMaxTokens(fields, req); err != nil {
		return err
	}
	if err := decodeSampling(fields, req); err != nil {
		return err
	}
	if req.Stop, err = decodeStop("stop", fields["stop"]); err != nil {
		return err
	}
	if err := decodeStreaming(fields, req); err != nil {
		return err
	}
	if err := decodeStreamOptions(fields["stream_options"], req); err != nil {
		return err
	}
	if u, err := optionalString(fields, "user"); err != nil {
		return err
	} else if u != nil {
		req.User = *u
	}
	return decodeAdapter(fields, req)
}

func decodeMaxTokens(fields map[string]json.RawMessage, req *chatRequest) error {
	// max_completion_tokens is the current name; max_tokens the deprecated
	// one. When both are given the current one wins; both are validated.
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		v, err := optionalInt(fields, key)
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		if *v < 1 {
			return invalid(key, "invalid_value", "'%s' must be at least 1, got %d", key, *v)
		}
		req.MaxTokens = int(min(*v, math.MaxInt32))
	}
	return nil
}

func decodeStreamOptions(raw json.RawMessage, req *chatRequest) error {
	if isNull(raw) {
		return nil
	}
	var opts map[string]json.RawMessage
	if err := json.Unmarshal(raw, &opts); err != nil || opts == nil {
		return wrongType("stream_options", "an object", raw)
	}
	if !req.Stream {
		return invalid("stream_options", "invalid_value", "'stream_options' is only allowed when 'stream' is true")
	}
	v, err := optionalBool(opts, "include_usage")
	if err != nil {
		return withParam(err, "stream_options.include_usage")
	}
	if v != nil {
		req.IncludeUsage = *v
	}
	return nil
}
