package openai

import (
	"encoding/json"
	"math"

	"github.com/kiln-ai/kiln/server/wire"
)

// A chat completion's body (POST /v1/chat/completions) decoded into the
// internal request; legacy completions share its options
// (completions_request.go).

// ParseChat validates a chat completion body (read whole by the
// body middleware, server/body.go). Unknown fields are accepted and ignored, as
// OpenAI does; a known field of the wrong type or out of range is a 400
// naming the field.
func ParseChat(data []byte) (*wire.Request, error) {
	fields, err := wire.DecodeObject(data)
	if err != nil {
		return nil, err
	}
	req := &wire.Request{}
	if req.Model, err = wire.RequiredString(fields, "model"); err != nil {
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
	if req.TemplateKwargs, err = wire.DecodeTemplateKwargs(fields["chat_template_kwargs"]); err != nil {
		return nil, err
	}
	return req, nil
}

// decodeOptions reads the fields chat and legacy completions share: the
// limits, sampling, stop sequences, n, streaming, user and
// include_performance.
func decodeOptions(fields map[string]json.RawMessage, req *wire.Request) error {
	if err := decodeMaxTokens(fields, req); err != nil {
		return err
	}
	if err := wire.DecodeGeneration(fields, req, "stop", false); err != nil {
		return err
	}
	if err := decodeStreamOptions(fields["stream_options"], req); err != nil {
		return err
	}
	if u, err := wire.OptionalString(fields, "user"); err != nil {
		return err
	} else if u != nil {
		req.User = *u
	}
	return wire.DecodeAdapter(fields, req)
}

func decodeMaxTokens(fields map[string]json.RawMessage, req *wire.Request) error {
	// max_completion_tokens is the current name; max_tokens the deprecated
	// one. When both are given the current one wins; both are validated.
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		v, err := wire.OptionalInt(fields, key)
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		if *v < 1 {
			return wire.Invalid(key, "invalid_value", "'%s' must be at least 1, got %d", key, *v)
		}
		req.MaxTokens = int(min(*v, math.MaxInt32))
	}
	return nil
}

func decodeStreamOptions(raw json.RawMessage, req *wire.Request) error {
	if wire.IsNull(raw) {
		return nil
	}
	var opts map[string]json.RawMessage
	if err := json.Unmarshal(raw, &opts); err != nil || opts == nil {
		return wire.WrongType("stream_options", "an object", raw)
	}
	if !req.Stream {
		return wire.Invalid("stream_options", "invalid_value", "'stream_options' is only allowed when 'stream' is true")
	}
	v, err := wire.OptionalBool(opts, "include_usage")
	if err != nil {
		return wire.WithParam(err, "stream_options.include_usage")
	}
	if v != nil {
		req.IncludeUsage = *v
	}
	return nil
}
